"""``bytepair shrink``: cut a vocabulary down to a domain (:func:`bytepair.shrink`)
and write the small tokenizer and its id map, with a report of what changed."""

from __future__ import annotations

import argparse
import glob
import io
import os
import time
from pathlib import Path
from typing import Any

from ..atomic import atomic_write_bytes, check_output_path
from ..conversion import convert
from ..shards.paths import expand_all
from ..shrinking import dropped_kinds, require_numpy, shrink, token_use
from .common import (
    Busy,
    UsageError,
    add_command,
    add_tokenizer_options,
    check_cli_outputs,
    decode_input,
    emit,
    emit_json,
    one_tokenizer,
    positive_int,
    read_stdin_bytes,
)

#: Output formats (those of ``bytepair convert``).
FORMATS = ("bytepair", "tiktoken", "hf", "gpt2", "transformers")
#: The files written inside the -o folder of the folder formats.
FOLDER_FILES = {"gpt2": ("vocab.json", "merges.txt"),
                "transformers": ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")}


def _corpus(args: argparse.Namespace) -> tuple[list[Any], int]:
    """The documents: every path (read as ``train`` reads it: folders, globs,
    JSONL and Parquet shards), ``-`` for stdin, then every ``--text``. Returns
    them and the number of files."""
    data: list[Any] = []
    paths: list[str] = []
    for f in args.files:
        if f == "-":
            data.append(decode_input(read_stdin_bytes(), "<stdin>", False))
            continue
        if not os.path.exists(f) and not glob.has_magic(f):
            raise FileNotFoundError(2, "No such file or directory", f)
        data.append(Path(f))
        paths.append(f)
    data += args.text or []
    if not data:
        raise UsageError("no corpus: give FILE or FOLDER ..., '-' for stdin, or --text STRING")
    return data, len(expand_all(paths))


def _keep_tokens(values: list[str] | None) -> list[Any]:
    """``--keep-token`` values: ``#ID`` is an id, anything else the token's text
    (backslash escapes such as ``\\n`` are read)."""
    out: list[Any] = []
    for v in values or []:
        if v.startswith("#") and v[1:].isdigit():
            out.append(int(v[1:]))
        else:
            try:
                out.append(v.encode("latin-1", "backslashreplace").decode("unicode_escape"))
            except UnicodeDecodeError as e:
                raise UsageError(f"--keep-token {v!r}: {e.reason} at character {e.start} (escapes: \\n, \\t, "
                                 "\\xHH, \\uHHHH; \\\\ for a backslash)") from None
    return out


def _save_id_map(path: str, id_map: Any) -> None:
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, id_map, allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


#: Kinds always named in the report (when any were dropped), after the largest scripts.
_ALWAYS = ("whitespace", "digits", "punctuation", "bytes")
_LABEL = {"whitespace": "whitespace runs", "punctuation": "punctuation and symbols", "bytes": "parts of characters",
          "mixed": "mixed"}


def _label(kind: str) -> str:
    """A kind as the report names it: scripts in title case ("Latin", "Hangul", "CJK")."""
    if kind in _LABEL:
        return _LABEL[kind]
    return kind if kind == "CJK" or not kind.isupper() else kind.title()


def _kinds_line(kinds: dict[str, int], top: int = 6) -> str:
    """The dropped kinds: the ``top`` largest, then the always-named ones, then how many more."""
    shown = list(kinds)[:top] + [k for k in _ALWAYS if k in kinds and k not in list(kinds)[:top]]
    parts = [f"{_label(k)} {kinds[k]:,}" for k in shown]
    rest = len(kinds) - len(shown)
    return ", ".join(parts) + (f", {rest} more kinds ({sum(kinds[k] for k in kinds if k not in shown):,})"
                               if rest else "")


def cmd_shrink(args: argparse.Namespace) -> int:
    if args.keep is None and args.min_count is None:
        raise UsageError("give --keep N (the new vocabulary size) or --min-count K (the fewest uses a kept token has)")
    require_numpy()  # before the tokenizer is loaded: a missing numpy is told at once
    keep_tokens = _keep_tokens(args.keep_token)
    out = check_output_path(args.output, folder=args.to in ("gpt2", "transformers"))
    if args.id_map is not None:
        check_output_path(args.id_map)
    planned = [os.path.join(out, n) for n in FOLDER_FILES[args.to]] if args.to in FOLDER_FILES else [out]
    check_cli_outputs(args, [("-o", p) for p in planned] + [("--id-map", args.id_map)])
    name, base = one_tokenizer(args)
    data, n_files = _corpus(args)
    t0 = time.perf_counter()
    with Busy(args, "counting"):
        use = token_use(base, data, num_threads=args.threads)
    with Busy(args, "choosing"):
        small, id_map = shrink(base, counts=use, keep=args.keep, min_count=args.min_count,
                               keep_tokens=keep_tokens, strategy=args.strategy,
                               name=args.name)
    secs = time.perf_counter() - t0
    with Busy(args, "checking"):
        after = int(token_use(small, data, num_threads=args.threads).sum())
    lengths = [len(t) for t in base.token_bytes_list]
    n_bytes = int(sum(int(c) * lengths[i] for i, c in enumerate(use.tolist()) if c and i < len(lengths)))
    before = int(use.sum())
    convert(small, out, to=args.to)
    if args.id_map is not None:
        _save_id_map(args.id_map, id_map)
    kinds = dropped_kinds(base, id_map)
    n_special = len(small.special_tokens)
    report = {
        "base": name, "base_n_vocab": base.n_vocab, "n_vocab": small.n_vocab,
        "mergeable": small.n_vocab - n_special, "special_tokens": n_special, "strategy": args.strategy,
        "corpus_files": n_files, "corpus_bytes": n_bytes, "tokens_before": before, "tokens_after": after,
        "bytes_per_token_before": n_bytes / max(before, 1), "bytes_per_token_after": n_bytes / max(after, 1),
        "dropped": sum(kinds.values()), "dropped_kinds": kinds, "seconds": secs, "output": out,
        "id_map": args.id_map,
    }
    if args.json:
        emit_json(report)
        return 0
    emit(f"kept {small.n_vocab:,} of {base.n_vocab:,} tokens ({small.n_vocab - n_special:,} mergeable "
         f"+ {n_special} special)")
    ratio = after / before if before else 1.0
    emit(f"corpus ({n_bytes:,} bytes): {before:,} tokens before, {after:,} after ({ratio:.4f}x)")
    emit(f"bytes per token: {report['bytes_per_token_before']:.3f} before, "
         f"{report['bytes_per_token_after']:.3f} after")
    emit(f"dropped {report['dropped']:,} tokens: {_kinds_line(kinds)}")
    emit(f"wrote {out} ({args.to})" + (f" and {args.id_map} (id_map[new_id] = old_id)" if args.id_map else ""))
    return 0


def add_parsers(subparsers: Any) -> None:
    s = add_command(subparsers, "shrink", cmd_shrink, "cut a vocabulary down to the tokens a domain uses",
                    "Count each token's use on a corpus of the domain, keep the tokens it needs most (with the "
                    "tokens each is merged from, every byte and every special token), and write the small "
                    "tokenizer and its id map (id_map[new_id] = old_id: embedding[id_map] is the new matrix). "
                    "Texts made of kept tokens encode to the same tokens, renumbered.")
    add_tokenizer_options(s)
    s.add_argument("files", nargs="*", metavar="FILE",
                   help="the domain's text: UTF-8 text files (one document each), JSONL and Parquet shards, "
                        "folders, globs, as train reads them; '-' is stdin")
    s.add_argument("--text", action="append", metavar="STRING", help="a document given inline (repeatable)")
    s.add_argument("--keep", type=positive_int("--keep"), metavar="N",
                   help="the new vocabulary size (bytes, special tokens and chosen tokens)")
    s.add_argument("--min-count", type=positive_int("--min-count"), metavar="K",
                   help="keep every token the corpus uses at least K times")
    s.add_argument("--keep-token", action="append", metavar="TOKEN",
                   help="keep this token whatever the corpus says: its text (escapes like \\n read) "
                        "or #ID (repeatable)")
    s.add_argument("--strategy", choices=("prior", "rank", "count"), default="prior",
                   help="how the budget is filled after the corpus's own tokens (default prior; "
                        "see the shrink guide)")
    s.add_argument("--to", choices=FORMATS, default="bytepair", help="output format (default bytepair JSON)")
    s.add_argument("-o", "--output", default="shrunk.bytepair.json", help="where to write the small tokenizer")
    s.add_argument("--id-map", metavar="FILE.npy", help="write id_map as a numpy .npy file (int64)")
    s.add_argument("--name", help="the small tokenizer's name (default: the base's + '-shrunk')")
    s.add_argument("--threads", type=positive_int("--threads"), default=None,
                   help="encoding threads (default: all cores)")
