"""Does a two-thread batch call scale worse because each thread's piece cache
has seen only its half of the warm-up text? One process, pairs of fresh
encoders of one encoding (one used on 1 thread, one on 2): in the "steady"
state both warm on the first 1 MB slice's documents only (the batch group's
protocol), in the "warm" state on every slice, the timed ones included. Each
of the later slices is then encoded once by each encoder, back to back (order
alternating), and the per-slice ratio 1 thread / 2 threads is kept; six
rounds, the two states interleaved. If the steady ratio sat well below the
warm one, per-thread caches warmed on half the text would be a limit.

    python benches/experiments/batch_warmth.py cl100k_base en_kjv
"""

from __future__ import annotations

import os
import statistics
import sys
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benches/
from bench_encode import batch_documents, batch_pair, corpus_bytes, slices

from bytepair import registry


def main() -> None:
    name, corpus = sys.argv[1], sys.argv[2]
    parts = batch_documents(slices(corpus_bytes(corpus)))
    data = registry.read_bundled_ranks(name)
    got: Dict[str, List[float]] = {"steady": [], "warm": []}
    for r in range(6):
        for state in ("steady", "warm") if r % 2 == 0 else ("warm", "steady"):
            ratios, same = batch_pair(name, data, parts, parts if state == "warm" else parts[:1], threads=2)
            if not same:
                sys.exit(f"{name} {corpus}: the 2-thread ids differ from the 1-thread ids")
            got[state] += ratios
    for state, v in got.items():
        print(f"{name} {corpus} {state}: 2 threads / 1 thread median {statistics.median(v):.2f} "
              f"range {min(v):.2f}-{max(v):.2f} ({len(v)} slices)")


if __name__ == "__main__":
    main()
