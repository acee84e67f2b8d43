"""Counting alone at corpus scale: ``bytepair.counts.count_chunks`` on a text file
(counted in parallel ranges), one fresh process per (pattern, threads), wall
time, CPU time and MB/s, plus the distinct chunks found (equal across thread
counts: the table never depends on them).

    python benches/train_scale_corpus.py        # builds the corpora
    python benches/bench_count_scale.py [--corpus linux_1200m.txt] [--patterns gpt2,o200k] [--threads 1,2]

Prints one Markdown table row per run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache/bytepair-data")) / "scale"

RUNNER = """
import os, pathlib, sys, time
from bytepair import counts
path, pattern, threads = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
t, c = time.perf_counter(), time.process_time()
table = counts.count_chunks(path, pattern=pattern, num_threads=threads)
wall, cpu = time.perf_counter() - t, time.process_time() - c
print(wall, cpu, len(table))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="linux_1200m.txt", help="a file under the scale data directory")
    ap.add_argument("--patterns", default="gpt2,o200k")
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    path = DATA / a.corpus
    size = path.stat().st_size
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    print("| corpus | pattern | threads | wall s | CPU s | MB/s | distinct chunks |", flush=True)
    print("|---|---|---:|---:|---:|---:|---:|", flush=True)
    for pattern in a.patterns.split(","):
        for threads in a.threads.split(","):
            out = subprocess.run([sys.executable, "-c", RUNNER, str(path), pattern, threads], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            wall, cpu, distinct = float(out[0]), float(out[1]), int(out[2])
            print(f"| {a.corpus} | {pattern} | {threads} | {wall:.2f} | {cpu:.2f} | {size / wall / 1e6:,.0f} "
                  f"| {distinct:,} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
