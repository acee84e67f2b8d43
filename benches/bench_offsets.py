"""What offsets cost: ``encode_with_offsets`` (character and byte spans) against
``encode`` of the same text, paired and interleaved in one process.

For every encoding and corpus, each repetition times ``encode(text)``,
``encode_with_offsets(text, unit="char")`` and ``encode_with_offsets(text,
unit="byte")`` back to back on the same slice (order rotated per repetition)
in CPU time (``time.process_time``), after one untimed warm-up call each (the
piece memo is then warm for all three alike). The ratio of each repetition is
taken inside that repetition, so machine phases on a shared VM cancel; the
table shows the median and the range of the ratios. Target: at most 1.3x
``encode``.

Also timed, once per cell: the same spans computed in Python from the ids
(``decode_tokens_bytes`` and a running sum), what callers do today.

    python benches/bench_offsets.py                      # 1 MB slices, 7 repetitions
    python benches/bench_offsets.py --mb 0.25 --reps 5 --encodings cl100k_base --corpora en_austen
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

from bench_encode import CORPORA, corpus_bytes, data_dir

import bytepair

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def cpu(fn, *args, **kw) -> float:
    t0 = time.process_time()
    fn(*args, **kw)
    return time.process_time() - t0


def python_spans(enc, text):
    ids = enc.encode(text)
    spans, at = [], 0
    for b in enc.decode_tokens_bytes(ids):
        spans.append((at, at + len(b)))
        at += len(b)
    return ids, spans


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=1.0, help="slice size per corpus in MB (default 1)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--encodings", nargs="*", default=ENCODINGS)
    ap.add_argument("--corpora", nargs="*", default=CORPORA)
    args = ap.parse_args()

    print(f"bytepair {bytepair.__version__}, python {sys.version.split()[0]}, data {data_dir()}")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; "
          f"{args.mb} MB slices, {args.reps} paired repetitions, CPU time")
    print()
    header = (f"{'encoding':<12} {'corpus':<17} {'encode MB/s':>11} {'char x':>14} {'byte x':>14} "
              f"{'python spans x':>14}")
    print(header)
    print("-" * len(header))
    for name in args.encodings:
        enc = bytepair.get_encoding(name)
        for corpus in args.corpora:
            raw = corpus_bytes(corpus)[: int(args.mb * 1_000_000)]
            text = raw.decode("utf-8", "ignore")
            calls = {
                "encode": lambda: enc.encode(text, disallowed_special=()),
                "char": lambda: enc.encode_with_offsets(text, disallowed_special=()),
                "byte": lambda: enc.encode_with_offsets(text, unit="byte", disallowed_special=()),
            }
            for f in calls.values():
                f()  # warm-up: piece memo and int cache filled alike
            ratios = {"char": [], "byte": []}
            base_times = []
            order = list(calls)
            for rep in range(args.reps):
                order = order[1:] + order[:1]
                t = {k: cpu(calls[k]) for k in order}
                base_times.append(t["encode"])
                for k, r in ratios.items():
                    r.append(t[k] / t["encode"])
            py = cpu(python_spans, enc, text) / min(base_times)
            mbps = len(raw) / 1e6 / statistics.median(base_times)

            def cell(r):
                return f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f})"

            print(f"{name:<12} {corpus:<17} {mbps:>11.1f} {cell(ratios['char']):>14} {cell(ratios['byte']):>14} "
                  f"{py:>14.2f}", flush=True)
    print()
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
