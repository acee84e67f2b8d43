"""Long-lived against fresh, paired in one process (the long-lived cell of
bench_encode.py, measured without the process-to-process noise of bench_encode.py).

Two encoders of the same encoding in one process, each with its own piece
caches: ``long`` first encodes 50 MB of the *other* corpora (1 MB slices,
round robin), ``fresh`` nothing. Both warm on the target corpus's first slice
(untimed), then encode slices 2-5 alternately (order swapped each slice), CPU
time, pinned by the caller (``taskset -c 0``). Printed: each encoder's median
MB/s, the median of the per-slice paired ratios long / fresh, and the long
encoder's piece cache size and wipes.

``--lists`` times ``encode_ordinary`` (a Python list of ints, which also
touches the encoder's cached int objects) instead of the numpy path.

    taskset -c 0 python benches/experiments/longlived_paired.py --encodings cl100k_base o200k_base gpt2
    taskset -c 0 python benches/experiments/longlived_paired.py --lists
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

from bench_encode import CORPORA, OTHER_MB, corpus_bytes, other_text, slices

from bytepair import _core, registry


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base", "gpt2"])
    ap.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    ap.add_argument("--lists", action="store_true", help="time encode_ordinary (lists) instead of arrays")
    args = ap.parse_args()

    def encode(core, text):
        if args.lists:
            return core.encode_ordinary(text, 1)
        return core.encode_to_array(text, None, None, 1)

    print(f"{'lists (encode_ordinary)' if args.lists else 'arrays (encode_to_array, 1 thread)'}")
    print("| encoding | corpus | fresh MB/s | long-lived MB/s | long / fresh (paired median) | long cache MB | wipes |")
    print("|---|---|---|---|---|---|---|")
    for name in args.encodings:
        data, spec = registry.read_bundled_ranks(name), registry._spec(name)
        for c in args.corpora:
            fresh = _core.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern)
            long = _core.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern)
            for o in other_text(c, CORPORA, OTHER_MB):
                encode(long, o)
            parts = slices(corpus_bytes(c))
            for core in (fresh, long):
                encode(core, parts[0])
            rates = {"fresh": [], "long": []}
            for k, p in enumerate(parts[1:]):
                mb = len(p.encode()) / 1e6
                order = [("fresh", fresh), ("long", long)]
                for label, core in order if k % 2 == 0 else order[::-1]:
                    t = time.process_time()
                    encode(core, p)
                    rates[label].append(mb / (time.process_time() - t))
            ratio = statistics.median(a / b for a, b in zip(rates["long"], rates["fresh"]))
            st = long.piece_cache_stats() or {}
            print(f"| {name} | {c} | {statistics.median(rates['fresh']):.0f} | {statistics.median(rates['long']):.0f} "
                  f"| {ratio:.2f}x | {st.get('bytes', 0) / 1e6:.0f} | {st.get('wipes', '-')} |", flush=True)


if __name__ == "__main__":
    main()
