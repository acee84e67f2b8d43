"""``bytepair bench``: a quick in-process speed check against tiktoken (real benchmarks: benches/)."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

from .. import __version__
from ..registry import get_encoding, list_encoding_names, tiktoken_encoding
from ..render import format_table
from .common import DEFAULT_ENCODING, UsageError, add_command, emit, emit_json, positive_int, read_texts, sample_path

#: The most runs per engine --repeat takes.
MAX_REPEAT = 1000


def cmd_bench(args: argparse.Namespace) -> int:
    name = args.encoding
    if args.files:
        texts = read_texts(args)
        label = ", ".join(lb for lb, _ in texts)
        text = "".join(t for _, t in texts)
    else:
        label = "the bundled sample"
        text = sample_path().read_text(encoding="utf-8")
    n_bytes = len(text.encode("utf-8"))
    if not n_bytes:
        raise UsageError(f"{label} is empty: there is nothing to encode")
    ours = get_encoding(name)
    engines: list[tuple[str, Callable[[str], list[int]]]] = [(f"bytepair {__version__}", ours.encode_ordinary)]
    try:
        import tiktoken
    except ImportError:
        pass
    else:
        engines.append((f"tiktoken {tiktoken.__version__}", tiktoken_encoding(name).encode_ordinary))
    if not 1 <= args.repeat <= MAX_REPEAT:
        raise UsageError(f"--repeat must be between 1 and {MAX_REPEAT}, got {args.repeat}")
    rows: list[dict[str, Any]] = []
    reference_ids: list[int] | None = None
    for label_e, fn in engines:
        best = float("inf")
        ids: list[int] = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ids = fn(text)
            best = min(best, max(time.perf_counter() - t0, 1e-9))  # never 0 s on a coarse clock
        same = None if reference_ids is None else ids == reference_ids
        if reference_ids is None:
            reference_ids = ids
        rows.append({"engine": label_e, "seconds": best, "mb_per_s": n_bytes / best / 1e6, "tokens": len(ids),
                     "same_ids": same})
    if args.json:
        emit_json({"text": label, "bytes": n_bytes, "encoding": name, "results": rows})
        return 0
    emit(f"encode_ordinary on {label} ({n_bytes:,} bytes) with {name}, best of {args.repeat}")
    emit(format_table(["engine", "MB/s", "tokens", "same ids"],
                     [[r["engine"], r["mb_per_s"], r["tokens"], "-" if r["same_ids"] is None else r["same_ids"]]
                      for r in rows]))
    if len(rows) > 1:
        emit(f"bytepair is {rows[0]['mb_per_s'] / rows[1]['mb_per_s']:.2f}x tiktoken's speed"
            " (one run on a shared machine: expect noise)")
    else:
        emit("tiktoken is not installed: nothing to compare with (pip install tiktoken)")
    return 0


def add_parsers(subparsers: Any) -> None:
    b = add_command(subparsers, "bench", cmd_bench, "quick speed check of bytepair against tiktoken",
                    "Encode a text with bytepair and (if installed) tiktoken in this process and print MB/s. For real "
                    "benchmarks see benches/.")
    b.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, choices=list_encoding_names(), metavar="NAME",
                   help=f"a bundled encoding: {', '.join(list_encoding_names())}; default {DEFAULT_ENCODING}")
    b.add_argument("files", nargs="*", metavar="FILE", help="text to encode (default: the bundled sample)")
    b.add_argument("--repeat", type=positive_int("--repeat"), default=3,
                   help="runs per engine; the best counts (default 3)")
