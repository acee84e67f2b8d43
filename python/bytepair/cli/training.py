"""``bytepair train``: train a tokenizer on files, text or a chunk-count file."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import Any

from .. import memory, patterns
from ..atomic import check_output_path
from ..checks import DEFAULT_MAX_TOKEN_LENGTH
from ..counts import ChunkCounts
from ..documents import Inputs
from ..render import show_bytes, show_token
from ..training import train_report
from .common import (
    UsageError,
    add_command,
    check_cli_outputs,
    decode_input,
    emit,
    emit_json,
    pattern_value,
    positive_int,
    read_stdin_bytes,
    sample_path,
    token_length,
)
from .extend_parity import add_train_options, cmd_train_parity
from .superword import add_superword_options, cmd_train_superword


def _training_data(args: argparse.Namespace) -> tuple[list[Any], str]:
    """The documents to train on: the files (``-`` is stdin) and every ``--text``,
    in that order; the bundled sample when none is given."""
    texts = args.text or []
    for t in texts:
        if t == "":
            raise UsageError("--text is empty: there is nothing to train on")
    data: list[Any] = []
    names: list[str] = []
    for f in args.files:
        if f == "-":
            text = decode_input(read_stdin_bytes(), "<stdin>", False)
            if not text:
                raise UsageError("stdin is empty: there is nothing to train on")
            data.append(text)
            names.append("<stdin>")
            continue
        p = Path(f)
        if not p.exists() and not glob.has_magic(f):
            raise FileNotFoundError(2, "No such file or directory", str(p))
        data.append(p)
        names.append(str(p))
    data += texts
    names += ["--text"] * len(texts)
    if not data:
        return [sample_path()], "the bundled sample"
    return data, ", ".join(dict.fromkeys(names))


def cmd_train(args: argparse.Namespace) -> int:
    if not args.parity:
        given = [flag for flag, v in (("--dev", args.dev), ("--parity-global", args.parity_global),
                                      ("--parity-unit", args.parity_unit)) if v is not None]
        if given:
            raise UsageError(f"{given[0]} goes with --parity LANG=FILE ... (parity-aware training)")
    elif args.superword is not None:
        raise UsageError("--superword and --parity are different trainings: give one")
    else:
        return cmd_train_parity(args)
    if args.superword is not None:
        return cmd_train_superword(args, _training_data)
    if args.span_counts is not None:
        raise UsageError("--span-counts goes with --superword T (superword training on counts)")

    out = Path(check_output_path(args.output))  # before training: a bad path fails now, naming itself
    check_cli_outputs(args, [("-o", out)], [("--counts", args.counts)] if args.counts else [])
    specials = args.special or ["<|endoftext|>"]
    kw: dict = {"min_frequency": args.min_frequency, "max_token_length": args.max_token_length,
                # a progress line unless -q / --json; into a log (stderr not a terminal) a plain
                # line every few seconds
                "num_threads": args.threads, "progress": not (args.quiet or args.json),
                "inputs": Inputs(text_column=args.text_column, text_field=args.text_field, cache_dir=args.cache,
                                 memory_limit=args.memory)}
    if args.counts:
        if args.files or args.text is not None:
            raise UsageError("give either --counts FILE or training text, not both")
        counts = ChunkCounts.load(args.counts)
        if args.pattern is not None and patterns.resolve(pattern_value(args.pattern)) != counts.pattern:
            made = patterns.name_of(counts.pattern) or ("none" if counts.pattern is None else "a custom regex")
            raise UsageError(f"--pattern {args.pattern} differs from the pattern {args.counts} was counted with "
                             f"({made}); the counts fix the pre-tokenization: drop --pattern, or count again")
        if args.threads is not None:
            raise UsageError("--threads sets the counting threads; with --counts there is nothing to count: drop it")
        # the special tokens cut out of the text when it was counted
        if args.special is None:
            specials = counts.special_tokens or specials
        elif counts.special_tokens and sorted(args.special) != sorted(counts.special_tokens):
            raise UsageError(f"--special {' '.join(args.special)} differs from the special tokens {args.counts} was "
                             f"counted with ({', '.join(counts.special_tokens)}); drop --special, or count again")
        source = args.counts
        run = train_report(None, args.vocab_size, counts=counts, special_tokens=specials, **kw)
    else:
        data, source = _training_data(args)
        pattern = pattern_value(args.pattern if args.pattern is not None else "o200k")
        run = train_report(data, args.vocab_size, pattern=pattern, special_tokens=specials, **kw)
    tok = run.tokenizer
    tok.save(out)
    peak = memory.peak_rss()  # after saving: writing a large vocabulary can be the peak
    first_bytes = [tok.decode_single_token_bytes(256 + k) for k in range(min(10, len(tok.merges)))]
    first = [show_bytes(b) for b in first_bytes]
    if args.json:
        emit_json({"source": source, "bytes": run.bytes, "seconds": run.seconds, "n_vocab": tok.n_vocab,
                   "merges": len(tok.merges), "special_tokens": specials,
                   "bytes_per_token": run.bytes_per_token, "first_merges": first, "output": str(out),
                   "peak_memory_bytes": peak})
        return 0
    n_special = len(specials)
    shown_peak = "" if peak is None else f", peak memory {peak / 1e6:,.0f} MB"
    emit(f"trained on {source} ({run.bytes:,} bytes) in {run.seconds:.2f} s{shown_peak}")
    emit(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {n_special} special "
         f"token{'' if n_special == 1 else 's'}")
    emit(f"bytes per token on the training text: {run.bytes_per_token:.2f}")
    emit(f"first merges: {', '.join(show_token(b, limit=40) for b in first_bytes) if first else '(none)'}")
    emit(f"wrote {out}")
    return 0


def add_parsers(subparsers: Any) -> None:
    t = add_command(subparsers, "train", cmd_train, "train a tokenizer (default corpus: the bundled English+Korean sample)",
            "Train a byte-level BPE tokenizer and write it as a bytepair JSON file. With no input it trains "
            "on the bundled sample (Jane Austen + the Constitution of the Republic of Korea).")
    t.add_argument("files", nargs="*", metavar="PATH",
                   help="UTF-8 text files, Parquet (.parquet) and JSONL (.jsonl[.gz]) shards, directories, "
                        "globs; '-' for stdin (default: the bundled sample)")
    t.add_argument("--text-column", default="text", help="the string column of Parquet shards (default text)")
    t.add_argument("--text-field", default="text", help="the key of the text in JSONL shards (default text)")
    t.add_argument("--text", action="append", metavar="STRING",
                   help="train on this text (repeatable; used with the files, after them)")
    t.add_argument("--counts", metavar="FILE", help="train from a chunk-count file (bytepair count-chunks)")
    t.add_argument("--vocab-size", type=int, default=2048, help="256 bytes + merges + special tokens (default 2048)")
    t.add_argument("--pattern", default=None,
                   help="pre-tokenization: gpt2 | cl100k | o200k (default) | none | a regex; "
                        "with --counts, the counts' own")
    t.add_argument("--special", action="append", metavar="TOKEN",
                   help="a special token (repeatable; default <|endoftext|>)")
    t.add_argument("--min-frequency", type=int, default=1, help="stop when the best pair is rarer")
    t.add_argument("--max-token-length", type=token_length, default=DEFAULT_MAX_TOKEN_LENGTH, metavar="N",
                   help=f"longest token in bytes (default {DEFAULT_MAX_TOKEN_LENGTH}; 'none': no limit)")
    t.add_argument("--threads", type=positive_int("--threads"), default=None,
                   help="counting threads (default: all cores; 0 is refused, as num_threads=0 is in the API)")
    t.add_argument("--memory", metavar="SIZE", default=None,
                   help="memory limit for the trainer's data, e.g. 2GB or 512MiB (default: half the machine's "
                        "memory); counting spills to disk past it with identical results")
    t.add_argument("--cache", metavar="DIR", default=None,
                   help="save each file's counts here as it is counted and reuse them: a run stopped with "
                        "Ctrl-C resumes where it stopped")
    t.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    t.add_argument("-o", "--output", default="tokenizer.bytepair.json", help="where to write the tokenizer")

    add_train_options(t)
    add_superword_options(t)
