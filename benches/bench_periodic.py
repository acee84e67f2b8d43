"""Periodic hostile inputs: N bytes of one repeated unit ('aA', '\\r\\n', a Hangul
syllable, an emoji, 'x', ...), bytepair against gigatoken, CPU ns per byte at
10 KB, 1 MB and 10 MB, and the 10 MB / 10 KB ratio (linear: <= 2).

The worst group of bench_encode.py times four inputs (runs of 'x' and spaces,
base64, one long Korean word); this script covers pieces that repeat a short
unit, which take other merge paths (runs, flat rounds, the queue). Each size is
timed on 3 texts of distinct lengths (best of 3), so no peer answers a timed
call from a cache of whole pieces; one core is the caller's business
(``taskset -c 0``). Every text's ids are checked against tiktoken's (built
offline from bytepair's bundled rank files) at 10 KB, and bytepair's against
gigatoken's at every size.

    taskset -c 0 python benches/bench_periodic.py
    taskset -c 0 python benches/bench_periodic.py --encodings gpt2 --units aA '\\r\\n'
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# no spinning OpenBLAS thread beside the timed calls (see bench_encode.py): set
# before numpy is imported
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from bench_encode import gigatoken_tokenizer, tiktoken_offline

import bytepair

UNITS = ["x", " ", "\n", "!", "1", "a ", "aA", "ab", "\r\n", "\u00e9", "\uac00", "\U0001f600"]
SIZES = [10_000, 1_000_000, 10_000_000]


def texts(unit: str, n: int, count: int, j: int) -> list:
    """`count` texts of about `n` bytes, lengths distinct per repetition `j`."""
    w = len(unit.encode())
    return [unit * ((n - (j * count + k) % 97 * w) // w) for k in range(count)]


def ns_per_byte(f, unit: str, n: int) -> float:
    count = max(1, min(100, 1_000_000 // n))
    best = float("inf")
    for j in range(3):
        batch = texts(unit, n, count, j)
        nb = sum(len(t.encode()) for t in batch)
        t0 = time.process_time()
        for t in batch:
            f(t)
        best = min(best, (time.process_time() - t0) / nb * 1e9)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["gpt2", "cl100k_base", "o200k_base"])
    ap.add_argument("--units", nargs="+", default=UNITS,
                    help="units to repeat (Python escapes such as '\\r\\n' are decoded)")
    ap.add_argument("--no-gigatoken", action="store_true")
    args = ap.parse_args()
    units = [u.encode().decode("unicode_escape") if "\\" in u else u for u in args.units]
    print("| encoding | unit | bytepair 10 KB / 1 MB / 10 MB | gigatoken 10 KB / 1 MB / 10 MB "
          "| 10 MB / 10 KB (bytepair / gigatoken) |")
    print("|---|---|---|---|---|")
    for name in args.encodings:
        enc = bytepair.get_encoding(name)
        tt = tiktoken_offline(name)
        giga = None if args.no_gigatoken else gigatoken_tokenizer(name)
        for unit in units:
            check = texts(unit, SIZES[0], 1, 9)[0]
            if enc.encode_ordinary(check) != tt.encode_ordinary(check):
                raise SystemExit(f"{name} {unit!r}: bytepair's ids differ from tiktoken's")
            peers = {"bytepair": lambda t: enc.encode_to_numpy(t, num_threads=1)}
            if giga is not None:
                peers["gigatoken"] = giga.encode
            cells = {}
            for p, f in peers.items():
                cells[p] = [ns_per_byte(f, unit, n) for n in SIZES]
            if giga is not None:
                for n in SIZES:
                    t = texts(unit, n, 1, 5)[0]
                    if not np.array_equal(np.asarray(giga.encode(t), dtype=np.uint32), enc.encode_to_numpy(t)):
                        raise SystemExit(f"{name} {unit!r} {n}: bytepair's ids differ from gigatoken's")

            def fmt(p: str) -> str:
                return " / ".join(f"{v:.1f}" for v in cells[p]) if p in cells else "-"

            ratio = " / ".join(f"{cells[p][-1] / cells[p][0]:.2f}x" for p in peers)
            print(f"| {name} | {unit!r} | {fmt('bytepair')} | {fmt('gigatoken')} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
