"""What budgets cost: ``count(limit=)``, ``truncate_text`` and ``chunk_text``
against ``count`` of the whole text, paired and interleaved in one process (CPU
time, ``time.process_time``; order rotated per repetition; median of the
per-repetition ratios).

Columns (each a ratio to ``count(text)`` of the same slice):

* ``count limit=1k``: counting stops past 1,000 tokens; should be a small
  fraction (proportional to the part read);
* ``trunc 1k`` / ``trunc 1k start``: the longest prefix / suffix of at most
  1,000 tokens (exact);
* ``trunc all-1``: a budget one token short of the whole text (reads it all);
* ``chunk 512``: ``chunk_text(text, 512)`` (one exact truncation per chunk).

    python benches/bench_budget.py                      # 1 MB slices, 5 repetitions
    python benches/bench_budget.py --mb 0.25 --encodings o200k_base --corpora ko_prose
    python benches/bench_budget.py --long-runs --encodings o200k_base

``--long-runs`` times the exact search where the text has no restart point:
one character repeated, and random lowercase letters (seed 3) cut to a twenty-
fifth of their length in tokens, from either side, against ``count`` (CPU
seconds, one call each after one warm-up call).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from bench_encode import CORPORA, corpus_bytes

import bytepair

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def long_runs(encodings: list) -> None:
    import random

    rng = random.Random(3)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(400_000))
    cases = [("x" * 100_000, 1000), ("뷁" * 30_000, 1000), ("7" * 100_000, 1000),
             (letters[:100_000], 4000), (letters, 16000)]
    print(f"bytepair {bytepair.__version__}, python {sys.version.split()[0]}; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; CPU seconds")
    for name in encodings:
        enc = bytepair.get_encoding(name)
        enc.count("warm up")
        for text, k in cases:
            c = cpu(lambda: enc.count(text))
            for side in ("end", "start"):
                d = cpu(lambda: enc.truncate_text(text, k, side=side))
                print(f"{name} {text[:3]!r} {len(text.encode())} bytes, {k} tokens, side {side}: "
                      f"truncate {d:.3f} s, count {c:.4f} s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--encodings", nargs="*", default=ENCODINGS)
    ap.add_argument("--corpora", nargs="*", default=CORPORA)
    ap.add_argument("--long-runs", action="store_true",
                    help="instead: runs with no restart point (one repeated character, random letters)")
    args = ap.parse_args()
    if args.long_runs:
        long_runs(args.encodings)
        return
    print(f"bytepair {bytepair.__version__}, python {sys.version.split()[0]}; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.mb} MB slices, {args.reps} paired repetitions")
    cols = ["count limit=1k", "trunc 1k", "trunc 1k start", "trunc all-1", "chunk 512"]
    print(f"{'encoding':<12} {'corpus':<15} {'count ms':>9} " + " ".join(f"{c:>14}" for c in cols))
    for name in args.encodings:
        enc = bytepair.get_encoding(name)
        for corpus in args.corpora:
            text = corpus_bytes(corpus)[: int(args.mb * 1_000_000)].decode("utf-8", "ignore")
            total = enc.count(text, disallowed_special=())
            kw = {"disallowed_special": ()}
            calls = {
                "count": lambda: enc.count(text, **kw),
                "count limit=1k": lambda: enc.count(text, limit=1000, **kw),
                "trunc 1k": lambda: enc.truncate_text(text, 1000, **kw),
                "trunc 1k start": lambda: enc.truncate_text(text, 1000, side="start", **kw),
                "trunc all-1": lambda: enc.truncate_text(text, total - 1, **kw),
                "chunk 512": lambda: enc.chunk_text(text, 512, **kw),
            }
            for f in calls.values():
                f()
            ratios = {c: [] for c in cols}
            base = []
            order = list(calls)
            for _ in range(args.reps):
                order = order[1:] + order[:1]
                t = {k: cpu(calls[k]) for k in order}
                base.append(t["count"])
                for c, r in ratios.items():
                    r.append(t[c] / t["count"])
            print(f"{name:<12} {corpus:<15} {1000 * statistics.median(base):>9.1f} "
                  + " ".join(f"{statistics.median(r):>14.3f}" for r in ratios.values()), flush=True)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
