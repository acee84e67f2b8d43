"""Builds of bytepair's extension compared on new and repeated ``str`` objects.

A Python ``str`` that is not ASCII reaches the encoder as UTF-8 made from its
code units: by CPython on first use (then kept with the string) or, on CPUs
with AVX-512 VBMI2, by bytepair (``src/utf8.rs``, into a new buffer on every
call: nothing is kept). Which one pays, and how much, depends on whether the
object is new, so this tool times both cases, in one process, the builds
interleaved (as ``ab_core.py``):

* **new str**: every call gets an equal string made anew (``(text + "!")[:-1]``,
  made before the timer starts), as a caller encoding each text once does;
* **same str again**: the same object encoded a second time right after.

Every build warms its piece cache on the text first (untimed), so both columns
time the hit path plus the conversion. CPU time, one build after the other in
each repetition; the median MB/s of each.

    python benches/experiments/ab_strings.py /tmp/core_base.so /tmp/core_new.so --encoding cl100k_base
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
from bench_encode import data_dir

from bytepair import registry


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", help="paths of _core shared objects; the first is the baseline")
    ap.add_argument("--encoding", default="cl100k_base")
    ap.add_argument("--corpora", nargs="+", default=["ko_prose", "multi_unicode", "en_pydocs", "en_kjv"])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)

    data = registry.read_bundled_ranks(args.encoding)
    spec = registry._spec(args.encoding)
    modules = [load_build(p, i) for i, p in enumerate(args.builds)]
    cores = [m.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern) for m in modules]
    labels = [Path(p).stem for p in args.builds]
    print("| corpus | str kind | build | new str MB/s | same str again MB/s | new / baseline | again / baseline |")
    print("|---|---|---|---|---|---|---|")
    for corpus in args.corpora:
        raw = (data_dir() / f"{corpus}.txt").read_bytes()[: int(args.mb * 1e6)]
        text = raw.decode("utf-8", "ignore")
        mb = len(text.encode()) / 1e6
        top = max(map(ord, text))
        kind = "ascii" if top < 0x80 else "latin1" if top < 0x100 else "ucs2" if top < 0x10000 else "ucs4"
        want = cores[0].encode_ordinary(text)
        for core in cores:
            assert core.encode_ordinary((text + "!")[:-1]) == want, "builds disagree"
        new: list[list[float]] = [[] for _ in cores]
        again: list[list[float]] = [[] for _ in cores]
        for rep in range(args.repeat):
            copies = [(text + "!")[:-1] for _ in cores]
            order = range(len(cores)) if rep % 2 == 0 else reversed(range(len(cores)))
            for i in order:
                t = time.process_time()
                cores[i].encode_to_array(copies[i])
                new[i].append(mb / (time.process_time() - t))
                t = time.process_time()
                cores[i].encode_to_array(copies[i])
                again[i].append(mb / (time.process_time() - t))
        base_new, base_again = statistics.median(new[0]), statistics.median(again[0])
        for i, label in enumerate(labels):
            n, a = statistics.median(new[i]), statistics.median(again[i])
            print(f"| {corpus} | {kind} | {label} | {n:.0f} | {a:.0f} | {n / base_new:.2f}x | {a / base_again:.2f}x |")


if __name__ == "__main__":
    main()
