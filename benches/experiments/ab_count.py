"""Counting (the trainer's first phase) of two builds of ``bytepair._core``,
paired in one process: ``ChunkCounter(pattern, [], None, 1).feed_texts`` over
one corpus cut into 100 KB documents, builds alternated (order reversed on odd
repetitions), CPU time. Pin it yourself (``taskset -c 0``). Build the two
extensions as described in ``ab_core.py``.

    taskset -c 0 python benches/experiments/ab_count.py en_kjv /tmp/core_base.so /tmp/core_new.so
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benches/
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from ab_core import load_build
from bench_encode import CORPORA, corpus_bytes

from bytepair import patterns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", choices=CORPORA)
    ap.add_argument("builds", nargs=2, help="baseline build, then the new one")
    ap.add_argument("--pattern", default="cl100k", choices=["gpt2", "cl100k", "o200k"])
    ap.add_argument("--repeat", type=int, default=8)
    args = ap.parse_args()
    pattern = {"gpt2": patterns.GPT2, "cl100k": patterns.CL100K, "o200k": patterns.O200K}[args.pattern]
    mods = [load_build(p, i) for i, p in enumerate(args.builds)]
    text = corpus_bytes(args.corpus).decode("utf-8")
    docs = [text[i:i + 100_000] for i in range(0, len(text), 100_000)]
    mb = len(text.encode()) / 1e6
    rates: list[list[float]] = [[], []]
    chunks = [0, 0]
    for rep in range(args.repeat):
        for i in (0, 1) if rep % 2 == 0 else (1, 0):
            c = mods[i].ChunkCounter(pattern, [], None, 1)
            t = time.process_time()
            c.feed_texts(docs)
            rates[i].append(mb / (time.process_time() - t))
            chunks[i] = len(c.finish())
    q = sorted(a / b for a, b in zip(rates[1], rates[0]))
    print(f"{args.corpus}: distinct chunks {chunks[0]} / {chunks[1]}; base {statistics.median(rates[0]):.0f} MB/s, "
          f"new {statistics.median(rates[1]):.0f} MB/s; paired new/base median {q[len(q) // 2]:.2f} "
          f"[{q[0]:.2f}-{q[-1]:.2f}]")


if __name__ == "__main__":
    main()
