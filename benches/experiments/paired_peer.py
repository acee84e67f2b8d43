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
It also times bytepair's pre-tokenizer alone on that slice
(``_core.pretokenize_count`` with the tokenizer's pattern, six passes): the
part of a warm encode that no cache can shorten. Its column "pre-tokenizer
share of 1.5x" is that time over the warm encode time that would be 1.5x
gigatoken's: at 100 % the pre-tokenizer alone uses the whole budget.

``--models`` runs open models' files instead of the bundled encodings:
``tokenizer.json`` folders of ``benches/bench_models.py`` (fetched by
``scripts/get-model-files.py``), loaded by ``bytepair.load`` and gigatoken's
``Tokenizer.from_json``; arrays only (a pipeline's lists add HF's added-token
semantics that gigatoken's tiktoken view does not share).

Usage::

    PYTHONPATH=python taskset -c 0 python benches/experiments/paired_peer.py --encodings cl100k_base o200k_base gpt2 [--warm] [--lists]
    PYTHONPATH=python taskset -c 0 python benches/experiments/paired_peer.py --models llama-3.2 qwen-2.5 --warm
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benches/
from bench_models import CORPORA, data_dir, load_peer, model_path

GIGA_PRETOK = {"cl100k_base": "cl100k", "o200k_base": "o200k", "gpt2": "gpt2"}


def slices(corpus: str, mb: float) -> list[str]:
    raw = (data_dir() / "corpora" / f"{corpus}.txt").read_bytes()
    size = int(mb * 1_000_000)
    out = [raw[i : i + size].decode("utf-8", "ignore") for i in range(0, len(raw) - size // 2, size)]
    for s in out:
        s.encode()  # CPython caches the UTF-8 copy: made before any timing
    return out


def split_pattern(config: dict[str, Any]) -> str:
    """The first Split pattern of a tokenizer.json's pre-tokenizer, else GPT-2's
    (a ByteLevel pre-tokenizer's own regex)."""
    from bytepair import _core

    found = re.search(r'"Regex":\s*("(?:[^"\\]|\\.)*")', json.dumps(config.get("pre_tokenizer")))
    return json.loads(found.group(1)) if found else _core.FAST_PATTERNS["bytelevel"]


def pair(name: str, is_model: bool, lists: bool) -> tuple[dict[str, Any], str]:
    """Fresh encode calls of both peers ("bp", "gt") and bytepair's pattern: a new
    encoder per corpus, as get_encoding's shared one would carry the previous
    corpora's pieces in its cache. An open model's file is loaded as
    ``bench_models.py`` loads it (arrays)."""
    import gigatoken

    from bytepair import registry

    if is_model:
        bp_arrays = load_peer("bytepair", name)[0]
        gt_arrays = load_peer("gigatoken", name)[0]
        pattern = split_pattern(json.loads(model_path(name).read_text(encoding="utf-8")))
        return {"bp": bp_arrays, "gt": gt_arrays}, pattern
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"bytepair-paired-{name}.tiktoken"
    data = registry.read_bundled_ranks(name)
    if not tmp.exists():
        tmp.write_bytes(data)
    bp = registry.load_bundled(name, data)
    gt = gigatoken.Tokenizer.from_tiktoken(str(tmp), pretokenizer=GIGA_PRETOK[name])
    if lists:
        return {"bp": bp.encode_ordinary, "gt": gt.as_tiktoken().encode_ordinary}, bp.pattern
    return {"bp": functools.partial(bp.encode_to_numpy, num_threads=1), "gt": gt.encode}, bp.pattern


def paired(run: dict[str, Any], parts: list[str], lists: bool) -> tuple[list[float], float, float, int, bool]:
    """Each slice once by each peer, the order alternating: ratios gigatoken / bytepair,
    total times, bytes, and whether every slice's ids agreed."""
    ratios, tb, tg, nb, same = [], 0.0, 0.0, 0, True
    for k, p in enumerate(parts):
        t, ids = {}, {}
        for who in ("bp", "gt") if k % 2 == 0 else ("gt", "bp"):
            t0 = time.process_time()
            ids[who] = run[who](p)
            t[who] = time.process_time() - t0
        a, g = ids["bp"], ids["gt"]
        same = same and len(a) == len(g) and (a == g if lists else bool((a == g).all()))
        ratios.append(t["gt"] / t["bp"])
        tb += t["bp"]
        tg += t["gt"]
        nb += len(p.encode())
    return ratios, tb, tg, nb, same


def warm_cells(run: dict[str, Any], p: str, pattern: Any) -> str:
    """Slice ``p`` (seen by both) six more times each, paired, and bytepair's
    pre-tokenizer alone on it six times."""
    from bytepair import _core

    ratios, tb, tg, _, _ = paired(run, [p] * 6, lists=False)
    t0 = time.process_time()
    for _ in range(6):
        _core.pretokenize_count(pattern, p)
    tp = time.process_time() - t0
    mb = 6 * len(p.encode()) / 1e6
    share = tp / (tg / 1.5)
    return f" {mb / tb:.0f} | {mb / tg:.0f} | {statistics.median(ratios):.2f}x | {mb / tp:.0f} | {share:.0%} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base", "gpt2"])
    ap.add_argument("--models", nargs="+", default=[], help="tokenizer.json folders (instead of --encodings)")
    ap.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    ap.add_argument("--mb", type=float, default=0.5, help="slice size (MB)")
    ap.add_argument("--slices", type=int, default=9, help="timed slices per corpus (at most)")
    ap.add_argument("--warm", action="store_true", help="also the warm state (slice 1 again, every piece a hit)")
    ap.add_argument("--lists", action="store_true", help="lists against lists instead of arrays against arrays")
    args = ap.parse_args()
    if args.models and args.lists:
        ap.error("--models compares arrays only")
    warm_head = (" warm bytepair MB/s | warm gigatoken MB/s | warm bytepair / gigatoken |"
                 " bytepair pre-tokenizer alone MB/s | pre-tokenizer share of 1.5x |") if args.warm else ""
    print(
        "| tokenizer | corpus | slices | bytepair MB/s | gigatoken MB/s | bytepair / gigatoken (paired median) | range |"
        f" ids equal |{warm_head}"
    )
    print("|---|---|---|---|---|---|---|---|" + ("---|---|---|---|---|" if args.warm else ""))
    for name in args.models or args.encodings:
        for corpus in args.corpora:
            parts = slices(corpus, args.mb)[: args.slices + 1]
            if len(parts) < 2:
                continue
            run, pattern = pair(name, bool(args.models), args.lists)
            run["bp"](parts[0])
            run["gt"](parts[0])
            ratios, tb, tg, nb, same = paired(run, parts[1:], args.lists)
            warm = warm_cells(run, parts[1], pattern) if args.warm else ""
            print(
                f"| {name} | {corpus} | {len(ratios)} | {nb / tb / 1e6:.0f} | {nb / tg / 1e6:.0f} |"
                f" {statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f} | {'yes' if same else 'NO'} |"
                + warm
            )
            del run


if __name__ == "__main__":
    main()
