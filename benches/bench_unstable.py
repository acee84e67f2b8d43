"""``encode_with_unstable`` (tiktoken's API) against tiktoken, one call at a time.

The cost depends on the text's end: a short unstable end with few candidates
is a few microseconds for both; an end that many tokens start with (a
trailing space, an indented line) builds thousands of candidates. Each case
is a sentence ending in such an end. Both encoders are built from the rank
files bundled in bytepair (no download); the results are checked equal.

Figures: microseconds per call, the best of ``--repeat`` runs of ``timeit``
(a number of calls chosen to last ~0.2 s), in one process pinned to a core.

    taskset -c 0 python benches/bench_unstable.py
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from bench_encode import machine, table

ENDS = ["It is fine.", "hello fanta", "def f(x):\n    ", "토크나", "café"]
LEAD = "A sentence before the end, to encode as well: "


def per_call(fn, text: str, repeat: int) -> float:
    """Microseconds per call of ``fn(text)``: the best of ``repeat`` timed runs."""
    t = timeit.Timer(lambda: fn(text))
    n, _ = t.autorange()
    n = max(1, n // 2)  # autorange aims at 0.2 s; half that per run is enough
    return min(t.repeat(repeat, n)) / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base", "gpt2"])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import bytepair
    from bytepair.registry import tiktoken_encoding  # the reference, from bytepair's bundled rank files

    print(machine())
    rows = []
    for name in args.encodings:
        enc, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
        for end in ENDS:
            text = LEAD + end
            got, want = enc.encode_with_unstable(text), ref.encode_with_unstable(text)
            if got[0] != want[0] or sorted(map(tuple, got[1])) != sorted(map(tuple, want[1])):
                raise SystemExit(f"{name} {end!r}: results differ from tiktoken")
            ours = per_call(enc.encode_with_unstable, text, args.repeat)
            theirs = per_call(ref.encode_with_unstable, text, args.repeat)
            rows.append([name, repr(end), f"{len(got[1]):,}", f"{ours:,.1f}", f"{theirs:,.1f}", f"{theirs / ours:.2f}x"])
    table("encode_with_unstable, µs per call (one process, best of runs)", ["encoding", "text ends with", "completions", "bytepair (µs)", "tiktoken (µs)", "bytepair vs tiktoken"],
          rows)


if __name__ == "__main__":
    main()
