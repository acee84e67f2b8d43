"""Per-file overhead of training input: N small files against the same bytes
in one file, counted by ``bytepair.counts.count_chunks`` (the first half of
``bytepair train``; merging does not see files).

Protocol: the corpus (``$BYTEPAIR_DATA/corpora/en_austen.txt`` by default) is
cut into N files of ``--size`` bytes (cut at character boundaries, each one
document) in a temporary directory, and the same bytes are joined into one
file. Each case runs in a fresh process (``--child``), three times; the
median wall time is reported, with the ratio many / one and the overhead per
file. The machine and the command are printed with the figures.

    python benches/bench_many_files.py                 # 4,000 files of 1.1 KB
    python benches/bench_many_files.py --files 100000  # toward 10^6
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def child(path: str, pattern: str) -> None:
    from bytepair.counts import count_chunks

    t = time.perf_counter()
    counts = count_chunks([Path(path)], pattern=pattern)
    print(f"{time.perf_counter() - t:.6f} {len(counts)}")


def run(path: Path, pattern: str) -> tuple[float, int]:
    out = subprocess.run([sys.executable, __file__, "--child", str(path), "--pattern", pattern],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=4000)
    ap.add_argument("--size", type=int, default=1100, help="bytes per file (default 1,100)")
    ap.add_argument("--corpus", default="en_austen.txt")
    ap.add_argument("--pattern", default="gpt2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.pattern)
        return
    text = (DATA / args.corpus).read_bytes()
    need = args.files * args.size
    text = (text * (need // len(text) + 1))[:need + 4]
    work = Path(tempfile.mkdtemp(prefix="bytepair-bench-files-"))
    try:
        folder = work / "files"
        folder.mkdir()
        parts = []
        pos = 0
        for i in range(args.files):
            end = pos + args.size
            while end < len(text) and (text[end] & 0xC0) == 0x80:  # a character boundary
                end += 1
            parts.append(text[pos:end])
            (folder / f"{i:07d}.txt").write_bytes(text[pos:end])
            pos = end
        one = work / "one.txt"
        one.write_bytes(b"".join(parts))
        many_t, one_t = [], []
        for _ in range(args.repeats):
            t, n_many = run(folder, args.pattern)
            many_t.append(t)
            t, n_one = run(one, args.pattern)
            one_t.append(t)
        many, single = statistics.median(many_t), statistics.median(one_t)
        print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
        print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
        print(f"{args.files:,} files of {args.size:,} bytes ({len(b''.join(parts)) / 1e6:.1f} MB), pattern {args.pattern}")
        print(f"  many files: {many:.3f} s   one file: {single:.3f} s   ratio {many / single:.2f}x   "
              f"overhead {(many - single) / args.files * 1e6:.1f} us per file")
        print(f"  distinct chunks: {n_many:,} (many) {n_one:,} (one)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
