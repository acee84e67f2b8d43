"""``bytepair train --superword T``: superword training and its summary."""

from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path
from typing import Any, Callable

from .. import memory, train
from ..atomic import check_output_path
from ..counts import ChunkCounts
from ..render import show_token
from ..superword import DEFAULT_MAX_WORDS, superword_tokens
from .common import UsageError, check_cli_outputs, emit, emit_json, pattern_value


def transition_value(text: str) -> float:
    """``--superword``: a vocabulary size (``60000``) or a fraction (``0.9``)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--superword takes a vocabulary size (60000) or a fraction of --vocab-size (0.9), not {text!r}"
        ) from None


def add_superword_options(t: argparse.ArgumentParser) -> None:
    """The superword options of ``bytepair train``."""
    t.add_argument("--superword", type=transition_value, default=None, metavar="T",
                   help="train a superword tokenizer: ordinary BPE up to T tokens (a size, or a fraction of "
                        "--vocab-size such as 0.9), then merges across spaces up to --vocab-size")
    t.add_argument("--max-words", type=int, default=DEFAULT_MAX_WORDS, metavar="N",
                   help=f"with --superword: at most N words per token (default {DEFAULT_MAX_WORDS}; 0: no bound)")
    t.add_argument("--span-counts", metavar="FILE",
                   help="with --superword and --counts: the span counts of the same text "
                        "(bytepair count-chunks --pattern superword)")


def _counts_of(args: argparse.Namespace) -> dict:
    """``counts`` and ``span_counts`` from ``--counts`` and ``--span-counts``."""
    if not (args.counts and args.span_counts):
        raise UsageError("superword training on counts needs --counts FILE (the words) and --span-counts FILE "
                         "(the spans: bytepair count-chunks --pattern superword)")
    if args.files or args.text is not None:
        raise UsageError("give either --counts and --span-counts or training text, not both")
    for flag, value in (("--threads", args.threads), ("--cache", args.cache)):
        if value is not None:
            raise UsageError(f"{flag} is for counting; with --counts there is nothing to count: drop it")
    return {"counts": ChunkCounts.load(args.counts), "span_counts": ChunkCounts.load(args.span_counts)}


def cmd_train_superword(args: argparse.Namespace, training_data: Callable[[argparse.Namespace], Any]) -> int:
    """Trains with ``train(superword=...)`` and prints what stage 2 added."""
    if args.max_words < 0:
        raise UsageError(f"--max-words must be >= 0 (0: no bound), got {args.max_words}")
    out = Path(check_output_path(args.output))
    counted = [(flag, v) for flag, v in (("--counts", args.counts), ("--span-counts", args.span_counts)) if v]
    check_cli_outputs(args, [("-o", out)], counted)
    kw: dict = {"max_words": args.max_words or None, "min_frequency": args.min_frequency,
                "max_token_length": args.max_token_length, "progress": False if args.quiet or args.json else None,
                "memory_limit": args.memory}
    data: Any = None
    if counted:
        tables = _counts_of(args)
        source = f"{args.counts} and {args.span_counts}"
        specials = list(args.special or tables["counts"].special_tokens)
        if args.pattern is not None:
            kw["pattern"] = pattern_value(args.pattern)
        kw.update(tables)
    else:
        data, source = training_data(args)
        specials = args.special or ["<|endoftext|>"]
        kw.update(pattern=pattern_value(args.pattern if args.pattern is not None else "o200k"),
                  num_threads=args.threads, cache_dir=args.cache, text_column=args.text_column,
                  text_field=args.text_field)
    t0 = time.perf_counter()
    tok = train(data, args.vocab_size, superword=args.superword, special_tokens=specials, **kw)
    secs = time.perf_counter() - t0
    peak = memory.peak_rss()
    tok.save(out)
    found = superword_tokens(tok)
    by_words = collections.Counter(sum(1 for w in t.split(b" ") if w) for t in found.values())
    top = [show_token(t) for t in list(found.values())[:10]]
    if args.json:
        emit_json({"source": source, "seconds": secs, "n_vocab": tok.n_vocab, "merges": len(tok.merges),
                   "superword_tokens": len(found), "by_words": dict(sorted(by_words.items())),
                   "first_superword_tokens": top, "output": str(out), "peak_memory_bytes": peak})
        return 0
    shown_peak = "" if peak is None else f", peak memory {peak / 1e6:,.0f} MB"
    emit(f"trained a superword tokenizer on {source} in {secs:.2f} s{shown_peak}")
    emit(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {len(specials)} special "
         f"token{'' if len(specials) == 1 else 's'}")
    words = ", ".join(f"{k} word{'' if k == 1 else 's'}: {n:,}" for k, n in sorted(by_words.items()))
    emit(f"tokens across a space: {len(found):,} ({words or 'none'})")
    emit(f"first ones: {', '.join(top) if top else '(none)'}")
    emit(f"wrote {out}")
    return 0
