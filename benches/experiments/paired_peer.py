"""bytepair against gigatoken, paired in one process: a noise-robust ratio.

On a shared VM whole phases run 30-50 % slower, so the protocol of
``bench_encode.py`` (a fresh process per peer and corpus, one after the other)
puts ±25-50 % on single cells. Here both tokenizers live in one process, each
with its own caches: each warms on slice 0 of a corpus, then every later slice
is encoded once by each (unseen by both: the steady state of the protocol), the
order alternating, and the median of the per-slice ratios is printed. Arrays
against arrays (``encode_to_numpy`` on one thread against gigatoken's
``encode``), CPU time.

``--lists`` compares lists instead: bytepair's ``encode_ordinary`` against
gigatoken's ``as_tiktoken().encode_ordinary`` (the fastest exact list peer in
every cell of ``bench_encode.py``'s fresh group).

``--warm`` adds the warm state: slice 1, which both have now encoded, encoded
again six times by each (paired, order alternating). Every piece is then a
hit, so the ratio is that of the hit paths alone (pre-tokenizer, cache probe,
output); the steady ratio adds each peer's cost of merging the new pieces.

Usage::

    PYTHONPATH=python taskset -c 0 python benches/experiments/paired_peer.py --encodings cl100k_base o200k_base gpt2 [--warm] [--lists]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time
from pathlib import Path

CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
GIGA_PRETOK = {"cl100k_base": "cl100k", "o200k_base": "o200k", "gpt2": "gpt2"}


def slices(corpus: str, mb: float) -> list[str]:
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    raw = (root / f"{corpus}.txt").read_bytes()
    size = int(mb * 1_000_000)
    out = [raw[i : i + size].decode("utf-8", "ignore") for i in range(0, len(raw) - size // 2, size)]
    for s in out:
        s.encode()  # CPython caches the UTF-8 copy: made before any timing
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base", "gpt2"])
    ap.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    ap.add_argument("--mb", type=float, default=0.5, help="slice size (MB)")
    ap.add_argument("--slices", type=int, default=9, help="timed slices per corpus (at most)")
    ap.add_argument("--warm", action="store_true", help="also the warm state (slice 1 again, every piece a hit)")
    ap.add_argument("--lists", action="store_true", help="lists against lists instead of arrays against arrays")
    args = ap.parse_args()
    import gigatoken

    from bytepair import registry

    warm_head = " warm bytepair MB/s | warm gigatoken MB/s | warm bytepair / gigatoken |" if args.warm else ""
    print(
        "| encoding | corpus | slices | bytepair MB/s | gigatoken MB/s | bytepair / gigatoken (paired median) | range |"
        f" ids equal |{warm_head}"
    )
    print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if args.warm else ""))
    for name in args.encodings:
        tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bytepair-paired-{name}.tiktoken"
        data = registry.read_bundled_ranks(name)
        if not tmp.exists():
            tmp.write_bytes(data)
        for corpus in args.corpora:
            # a new encoder per corpus, like gigatoken's below: get_encoding's shared one would carry the
            # previous corpora's pieces in its cache
            bp = registry.load_bundled(name, data)
            gt = gigatoken.Tokenizer.from_tiktoken(str(tmp), pretokenizer=GIGA_PRETOK[name])
            parts = slices(corpus, args.mb)[: args.slices + 1]
            if len(parts) < 2:
                continue
            if args.lists:
                gtt = gt.as_tiktoken()
                run = {"bp": bp.encode_ordinary, "gt": gtt.encode_ordinary}
            else:
                run = {"bp": functools.partial(bp.encode_to_numpy, num_threads=1), "gt": gt.encode}
            run["bp"](parts[0])
            run["gt"](parts[0])
            ratios, tb, tg, nb, same = [], 0.0, 0.0, 0, True
            for k, p in enumerate(parts[1:]):
                order = ("bp", "gt") if k % 2 == 0 else ("gt", "bp")
                t = {}
                for who in order:
                    t0 = time.process_time()
                    ids = run[who](p)
                    t[who] = time.process_time() - t0
                    if who == "bp":
                        a = ids
                    else:
                        g = ids
                same = same and len(a) == len(g) and (a == g if args.lists else bool((a == g).all()))
                ratios.append(t["gt"] / t["bp"])
                tb += t["bp"]
                tg += t["gt"]
                nb += len(p.encode())
            warm = ""
            if args.warm:
                w_ratios, wb, wg, p = [], 0.0, 0.0, parts[1]
                for k in range(6):
                    t = {}
                    for who in (("bp", "gt") if k % 2 == 0 else ("gt", "bp")):
                        t0 = time.process_time()
                        run[who](p)
                        t[who] = time.process_time() - t0
                    w_ratios.append(t["gt"] / t["bp"])
                    wb += t["bp"]
                    wg += t["gt"]
                mb = 6 * len(p.encode()) / 1e6
                warm = f" {mb / wb:.0f} | {mb / wg:.0f} | {statistics.median(w_ratios):.2f}x |"
            print(
                f"| {name} | {corpus} | {len(ratios)} | {nb / tb / 1e6:.0f} | {nb / tg / 1e6:.0f} |"
                f" {statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f} | {'yes' if same else 'NO'} |"
                + warm
            )
            del bp, gt, run


if __name__ == "__main__":
    main()
