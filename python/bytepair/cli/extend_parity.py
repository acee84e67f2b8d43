"""``bytepair extend`` (grow a tokenizer with merges learned on new text),
``bytepair parity`` (per-language costs and their Gini coefficient), and the
parity-aware side of ``bytepair train`` (``--parity LANG=FILE ... --dev LANG=FILE ...``)."""

from __future__ import annotations

import argparse
import glob
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from .. import load
from ..checks import DEFAULT_MAX_TOKEN_LENGTH
from ..extending import extend
from ..inspect import parity
from ..memory import peak_rss
from ..parity import learn_parity
from ..render import show_bytes, show_token
from ..render.plot import plot_parity
from ..shards.paths import expand
from .common import (
    UsageError,
    add_command,
    add_input_options,
    add_tokenizer_options,
    check_cli_outputs,
    emit,
    emit_json,
    load_tokenizers,
    nonnegative_int,
    one_tokenizer,
    pattern_value,
    positive_int,
    read_texts,
    show_result,
    token_length,
)


def language_files(items: list[str] | None, option: str) -> dict[str, Path]:
    """``["en=a.txt", "ko=b.txt"]`` -> ``{"en": Path("a.txt"), ...}``, checked."""
    out: dict[str, Path] = {}
    for item in items or []:
        lang, sep, path = item.partition("=")
        if not sep or not lang or not path:
            raise UsageError(f"{option} takes LANG=FILE, got {item!r}")
        if lang in out:
            raise UsageError(f"{option}: language {lang!r} is given twice")
        if not os.path.exists(path) and not glob.has_magic(path):
            raise FileNotFoundError(2, "No such file or directory", path)
        expand(path)  # a file, shard, folder or glob, read as train reads it; refused here if it names nothing
        out[lang] = Path(path)
    return out


def save_verified(tok: Any, path: Path) -> None:
    """Writes ``tok`` as a bytepair file, but only after loading the written bytes
    back and finding the same tokenizer (ids, specials, gaps, merges, policy):
    the destination is never replaced by a file that loads differently."""
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".json", dir=folder)
    os.close(fd)
    try:
        tok.save(tmp)
        back = load(tmp)
        same = (back == tok and back.merges == tok.merges and back.gaps == tok.gaps
                and back.special_text == tok.special_text)
        if not same:  # pragma: no cover - a bug guard, not an expected path
            raise RuntimeError(f"internal error: {path} would load as a different tokenizer; nothing written")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _id_ranges(ids: list[int]) -> str:
    if not ids:
        return "none"
    parts, start, prev = [], ids[0], ids[0]
    for i in ids[1:] + [None]:  # type: ignore[list-item]
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    return ", ".join(parts)


def cmd_extend(args: argparse.Namespace) -> int:
    if (args.add is None) == (args.vocab_size is None):
        raise UsageError("give --add N (merges to add) or --vocab-size N, not both or neither")
    check_cli_outputs(args, [("-o", args.output)])
    label, base = one_tokenizer(args)
    texts = read_texts(args)
    docs = [t for _, t in texts]
    source = ", ".join(lbl for lbl, _ in texts)
    kw: dict = {"min_frequency": args.min_frequency, "max_token_length": args.max_token_length,
                "special_tokens": args.special or ()}
    kw["progress"] = not (args.quiet or args.json)  # a plain line every few seconds into a log
    if args.threads:
        kw["num_threads"] = args.threads
    if args.memory:
        kw["memory_limit"] = args.memory
    t0 = time.perf_counter()
    tok = extend(base, docs, args.vocab_size, add=args.add, **kw)
    secs = time.perf_counter() - t0
    out = Path(args.output)
    save_verified(tok, out)
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    before = sum(base.count(d, disallowed_special=()) for d in docs)
    after = sum(tok.count(d, disallowed_special=()) for d in docs)
    n_new = tok.n_vocab - base.n_vocab - len(args.special or ())
    first_new = base.n_vocab
    new_bytes = [tok.decode_single_token_bytes(first_new + k) for k in range(min(10, n_new))]
    shown = [show_bytes(b) for b in new_bytes]
    info = {"base": label, "source": source, "bytes": n_bytes, "seconds": secs, "base_n_vocab": base.n_vocab,
            "n_vocab": tok.n_vocab, "new_merges": n_new, "new_ids": [first_new, first_new + n_new - 1] if n_new else [],
            "gaps": tok.gaps, "special_tokens": tok.special_tokens, "tokens_before": before, "tokens_after": after,
            "first_new_tokens": shown, "output": str(out)}
    if args.json:
        emit_json(info)
        return 0
    emit(f"extended {label} with {source} ({n_bytes:,} bytes) in {secs:.2f} s")
    emit(f"vocab size {tok.n_vocab:,} = {base.n_vocab:,} base ids + {n_new:,} merges"
         f" + {len(args.special or ())} new special")
    emit(f"new ids {_id_ranges(list(range(first_new, first_new + n_new)))}; ids without a mergeable token: "
         f"{_id_ranges(tok.gaps)}")
    emit(f"tokens on the new text: {before:,} -> {after:,} ({before / max(after, 1):.2f}x fewer;"
         f" bytes per token {n_bytes / max(before, 1):.2f} -> {n_bytes / max(after, 1):.2f})")
    emit(f"first new tokens: {', '.join(show_token(b) for b in new_bytes)}")
    emit(f"wrote {out}")
    return 0


def cmd_parity(args: argparse.Namespace) -> int:
    langs = language_files(args.lang, "--lang")
    if not langs:
        raise UsageError("give the texts as --lang LANG=FILE (at least one; the first is the reference)")
    if args.plot:
        check_cli_outputs(args, [("--plot", args.plot)], [("the --lang file", p) for p in langs.values()])
    toks = dict(load_tokenizers(args))
    report = parity(toks, langs, unit=args.unit)
    if args.plot:
        plot_parity(report, args.plot)
    if args.json:
        emit_json(report.to_dict())
        return 0
    show_result(report, args)
    if args.plot:
        emit(f"wrote {args.plot}")
    return 0


def cmd_train_parity(args: argparse.Namespace) -> int:
    """``bytepair train --parity ...`` (called by the train command)."""
    if args.files or args.text or args.counts:
        raise UsageError("--parity takes the training text as LANG=FILE pairs; give no other input")
    langs = language_files(args.parity, "--parity")
    dev = language_files(args.dev, "--dev") if args.dev else None
    check_cli_outputs(args, [("-o", args.output)], [("the --parity file", p) for p in langs.values()]
                      + [("the --dev file", p) for p in (dev or {}).values()])
    specials = args.special or ["<|endoftext|>"]
    pattern = pattern_value(args.pattern if args.pattern is not None else "o200k")  # train's --pattern default
    kw: dict = {"min_frequency": args.min_frequency, "max_token_length": args.max_token_length}
    kw["progress"] = not (args.quiet or args.json)  # a plain line every few seconds into a log
    if args.threads:
        kw["num_threads"] = args.threads
    t0 = time.perf_counter()
    unit = args.parity_unit or "bytes"
    tok, chosen = learn_parity(langs, args.vocab_size, dev=dev, pattern=pattern, special_tokens=specials,
                               parity_unit=unit, global_merges=args.parity_global or 0, **kw)
    secs = time.perf_counter() - t0
    out = Path(args.output)
    tok.save(out)
    peak = peak_rss()
    per_lang = {g: chosen.count(g) for g in langs}
    if args.parity_global:
        per_lang = {"all pooled": chosen.count("*"), **per_lang}
    report = parity({"parity": tok}, dev or langs, unit=unit)
    if args.json:
        emit_json({"languages": {g: str(p) for g, p in langs.items()}, "seconds": secs, "n_vocab": tok.n_vocab,
                   "merges": len(tok.merges), "merges_chosen_by": per_lang, "report": report.to_dict(),
                   "output": str(out), "peak_memory_bytes": peak})
        return 0
    emit(f"trained parity-aware on {', '.join(f'{g}={p}' for g, p in langs.items())} in {secs:.2f} s"
         + ("" if peak is None else f", peak memory {peak / 1e6:,.0f} MB"))
    emit(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {len(specials)} special")
    emit("merges chosen by: " + ", ".join(f"{g} {n:,}" for g, n in per_lang.items()))
    emit(f"on the {'dev' if dev else 'training'} texts:")
    show_result(report, args)
    emit(f"wrote {out}")
    return 0


def add_train_options(t: argparse.ArgumentParser) -> None:
    """The parity-aware options of ``bytepair train``."""
    t.add_argument("--parity", nargs="+", metavar="LANG=FILE",
                   help="parity-aware training: one training file per language (the most expensive language "
                        "chooses each merge)")
    t.add_argument("--dev", nargs="+", metavar="LANG=FILE",
                   help="with --parity: a dev file per language, where costs are measured (default: the "
                        "training files)")
    t.add_argument("--parity-global", type=nonnegative_int("--parity-global"), default=None, metavar="N",
                   help="with --parity: the hybrid variant, the first N merges by standard BPE on all languages pooled")
    t.add_argument("--parity-unit", choices=["bytes", "chars", "tokens"], default=None,
                   help="with --parity: cost = tokens per byte (default), per character, or raw tokens "
                        "(parallel dev files)")


def add_parsers(subparsers: Any) -> None:
    e = add_command(subparsers, "extend", cmd_extend, "add merges learned on new text to an existing tokenizer",
                    "Continue BPE training on top of an existing tokenizer: every base token and special token "
                    "keeps its id, new tokens get the ids after the base's (after its special tokens). Writes a "
                    "bytepair JSON file, checked to load back as the same tokenizer.")
    add_tokenizer_options(e)
    add_input_options(e, what="the new text")
    e.add_argument("--add", type=int, metavar="N", help="how many merges to add")
    e.add_argument("--vocab-size", type=int, metavar="N", help="or: the vocab size to reach")
    e.add_argument("--special", action="append", metavar="TOKEN", help="a new special token (repeatable)")
    e.add_argument("--min-frequency", type=int, default=1, help="stop when the best pair is rarer")
    e.add_argument("--max-token-length", type=token_length, default=DEFAULT_MAX_TOKEN_LENGTH, metavar="N",
                   help=f"longest new token in bytes (default {DEFAULT_MAX_TOKEN_LENGTH}; 'none': no limit)")
    e.add_argument("--threads", type=positive_int("--threads"), default=None,
                   help="counting threads (default: all cores)")
    e.add_argument("--memory", metavar="SIZE", default=None,
                   help="memory limit for counting and the merge loop, e.g. 2GB (default: half the machine's "
                        "memory); a loop that needs more stops with the size it needs")
    e.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    e.add_argument("-o", "--output", default="extended.bytepair.json", help="where to write the tokenizer")

    p = add_command(subparsers, "parity", cmd_parity, "tokens per language and the Gini coefficient",
                    "Measure tokenizers on one text per language: tokens per byte and per character, each "
                    "language's cost relative to the first, and the Gini coefficient of the costs "
                    "(0 = every language costs the same).")
    add_tokenizer_options(p, many=True)
    p.add_argument("--lang", action="append", metavar="LANG=FILE", help="a language's text (repeatable; first = reference)")
    p.add_argument("--unit", choices=["bytes", "chars", "tokens"], default="bytes",
                   help="cost compared across languages: tokens per byte (default), per character, or raw "
                        "tokens (parallel texts)")
    p.add_argument("--plot", metavar="OUT.png", help="draw the relative costs as bars (needs matplotlib)")
