"""The flat path of long repetitive pieces against the queue, the path that
runs for them without it: one piece of ``N`` bytes merged by
``CoreBPE.encode_piece_with(piece, path)``, with ``path="auto"`` (the
dispatch: the runs path, then from 2 MB the flat path, else the queue) and
``path="queue"``.

Inputs: the repetitive units of tests/hostile_inputs.py and a few more that
are one long piece under the named patterns (``'aA' * N``, a repeated Korean
syllable pair, an emoji sequence), N = 3, 6 and 12 MB (all above the flat path's 2 MiB threshold). Per cell: CPU time of
this process (``time.process_time``, robust to other load), the best of
``--repeat`` runs, the two paths alternated (order reversed every other
repetition); ids checked equal. Prints ns per byte, the ratio queue / auto
(above 1: the flat path is faster) and auto's 12 MB / 3 MB ns-per-byte ratio
(linear: about 1).

    python benches/experiments/bench_flat_runs.py
    taskset -c 0 python benches/experiments/bench_flat_runs.py --encodings cl100k_base --mb 3 12
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))  # benches/

from bench_encode import machine, table

UNITS = {
    "'ab' * N": "ab",
    "'aA' * N": "aA",
    "'!?' * N": "!?",
    "'가나' * N": "가나",
    "emoji * N": "\U0001F600\u200d\U0001F3FB",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["gpt2", "cl100k_base", "o200k_base"])
    ap.add_argument("--mb", type=float, nargs="+", default=[3, 6, 12])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import bytepair

    print(machine())
    rows = []
    for name in args.encodings:
        core = bytepair.get_encoding(name)._core
        for label, unit in UNITS.items():
            per_byte = {}
            for mb in args.mb:
                unit_b = unit.encode()
                piece = unit_b * max(1, int(mb * 1e6) // len(unit_b))
                best = {"auto": float("inf"), "queue": float("inf")}
                ids = {}
                for rep in range(args.repeat):
                    for path in ("auto", "queue") if rep % 2 == 0 else ("queue", "auto"):
                        gc.collect()
                        t = time.process_time()
                        ids[path] = core.encode_piece_with(piece, path)
                        best[path] = min(best[path], time.process_time() - t)
                assert ids["auto"] == ids["queue"], (name, label, mb)
                auto, queue = (best[p] * 1e9 / len(piece) for p in ("auto", "queue"))
                per_byte[mb] = auto
                rows.append([name, label, f"{mb:g}", f"{auto:.1f}", f"{queue:.1f}", f"{queue / auto:.2f}x"])
            lo, hi = min(args.mb), max(args.mb)
            rows[-1].append(f"{per_byte[hi] / per_byte[lo]:.2f}")
    for r in rows:
        r += [""] * (7 - len(r))
    table("one long piece: auto (runs, flat, queue) against queue alone, ns per byte (CPU time)",
          ["encoding", "input", "MB", "auto", "queue", "queue / auto", f"auto {max(args.mb):g} / {min(args.mb):g} MB"],
          rows)


if __name__ == "__main__":
    main()
