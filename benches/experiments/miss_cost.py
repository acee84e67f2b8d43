"""What the piece cache's misses cost in a steady encode, per corpus.

The steady cell of bench_encode.py encodes text the caches have not seen: most pieces
hit (common words, warmed on the corpus's first slice), some are new and are
merged. This script separates the two. For each corpus, a fresh encoder warms
on slice 0, then encodes slices 2 and 3 (so the CPU's caches hold other text,
as in a steady run), then slice 1 is timed:

- "unseen": slice 1 is new to the piece cache (its new pieces are merged);
- "seen": the same, except that slice 1 was also encoded during the warm-up,
  so every piece hits, with the CPU's caches in the same state.

The difference, divided by the pieces the unseen run added to the cache, is
the cost of one miss (its merge and insertion). Median of four alternating
pairs of fresh encoders; one core; arrays (``encode_to_numpy``).

With ``--gigatoken``, gigatoken's ``encode`` (arrays) is timed the same way
(fresh tokenizers, the same slices); it has no cache counters, so only its
unseen and seen times and their difference are printed.

    taskset -c 0 python benches/experiments/miss_cost.py cl100k_base en_austen ko_prose multi_unicode
    taskset -c 0 python benches/experiments/miss_cost.py gpt2 --gigatoken
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benches/
from bench_encode import CORPORA, corpus_bytes, gigatoken_tokenizer, slices

from bytepair import registry


def cache_entries(enc: Any) -> int:
    stats = enc._core.piece_cache_stats() or {}
    return int(stats.get("entries", 0)) + int(stats.get("long_entries", 0))


def timed(enc: Callable[[str], Any], s: List[str], mode: str,
          entries: Callable[[], int] = lambda: 0) -> Tuple[float, int]:
    """One fresh encoder ``enc``: warm-up (slice 0, and slice 1 when ``mode``
    is "seen"), slices 2 and 3, then slice 1 (a new str) timed. Returns the
    time and the growth of ``entries()`` (the pieces the timed call added)."""
    enc(s[0])
    if mode == "seen":
        enc(s[1])
    enc(s[2])
    enc(s[3])
    text = s[1].encode().decode()  # a new str object, as in the protocol
    before = entries()
    t = time.perf_counter()
    enc(text)
    dt = time.perf_counter() - t
    return dt, entries() - before


def measure(name: str, corpus: str, giga: bool, rounds: int = 4) -> str:
    data = registry.read_bundled_ranks(name)
    s = slices(corpus_bytes(corpus))
    mb = len(s[1].encode()) / 1e6
    t: Dict[str, List[float]] = {"unseen": [], "seen": [], "g unseen": [], "g seen": []}
    misses: List[int] = []
    for _ in range(rounds):
        for mode in ("unseen", "seen"):
            enc = registry.load_bundled(name, data)
            dt, added = timed(enc.encode_to_numpy, s, mode, lambda: cache_entries(enc))
            t[mode].append(dt)
            if mode == "unseen":
                misses.append(added)
            if giga:
                t["g " + mode].append(timed(gigatoken_tokenizer(name).encode, s, mode)[0])
    a, b, n = statistics.median(t["unseen"]), statistics.median(t["seen"]), statistics.median(misses)
    per = (a - b) / n * 1e9 if n else 0.0
    row = (f"| {name} | {corpus} | {a * 1e3 / mb:.2f} | {b * 1e3 / mb:.2f} | {n / mb:,.0f} | {per:.0f} | "
           f"{(a - b) / a:.0%} |")
    if giga:
        ga, gb = statistics.median(t["g unseen"]), statistics.median(t["g seen"])
        row += f" {ga * 1e3 / mb:.2f} | {gb * 1e3 / mb:.2f} | {(ga - gb) / ga:.0%} |"
    return row


def main(argv: List[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        sys.exit(__doc__)
    giga = "--gigatoken" in argv
    args = [a for a in argv if a != "--gigatoken"]
    name, corpora = args[0], args[1:] or CORPORA
    head = "| encoding | corpus | unseen ms/MB | seen ms/MB | new pieces per MB | ns per new piece | share of the unseen time |"
    rule = "|---|---|---|---|---|---|---|"
    if giga:
        head += " gigatoken unseen ms/MB | gigatoken seen ms/MB | gigatoken: share of the unseen time |"
        rule += "---|---|---|"
    print(head)
    print(rule)
    for c in corpora:
        print(measure(name, c, giga), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
