"""Short calls: the cost of one encode call on a sentence, a paragraph, a page.

An LLM application encodes many short texts one call at a time (a chat
message, a chunk to count, a prompt to budget), so what it pays is the
per-call cost: argument handling, the output's allocation, the ids turned into
a list or an array; the merging itself is a small part. The 1 MB cells of
``bench_encode.py`` do not show it.

Protocol (as ``bench_encode.py``): one fresh process per (peer, encoding,
corpus), pinned to one core; every peer gets the same texts. The encoder
first encodes the corpus's first 1 MB slice (untimed: caches warm on the
corpus's common pieces). The timed texts are cut from the next slices, so
the timed text itself was never seen. For each size (bytes, cut at character
boundaries), three disjoint groups of texts are encoded one call each; the
figure is the median group's time per call. Lists are compared with lists,
arrays with arrays; every peer's ids are checked against bytepair's.

    taskset -c 0 python benches/bench_calls.py
    python benches/bench_calls.py --encodings cl100k_base --corpora en_austen ko_prose --sizes 64 1024
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no spinning BLAS thread beside the timed calls

from bench_encode import CORPORA, corpus_bytes, ids_hash, import_peer, load_peer, machine, slices, table, versions

HERE = os.path.abspath(__file__)
LISTS = ["bytepair", "tiktoken", "gigatoken", "quicktok"]
ARRAYS = ["bytepair-np", "tiktoken-np", "gigatoken-np"]
SIZES = [64, 1024, 16384]
QUICKTOK_HAS = ("cl100k_base", "o200k_base")
GROUPS = 3
GROUP_BYTES = 200_000  # text per group (at most GROUP_TEXTS texts)
GROUP_TEXTS = 2000


def texts_of(corpus: str, sizes: List[int]) -> Dict[int, List[List[str]]]:
    """For each size, GROUPS disjoint groups of texts of about that many bytes,
    cut one after the other from the corpus's slices 1 and later (never from
    the warm-up slice 0, and no text shared between sizes or groups)."""
    raw = "".join(slices(corpus_bytes(corpus))[1:]).encode()
    out: Dict[int, List[List[str]]] = {}
    at = 0
    for size in sizes:
        per = max(1, min(GROUP_TEXTS, GROUP_BYTES // size))
        groups = []
        for _ in range(GROUPS):
            group = []
            for _ in range(per):
                group.append(raw[at:at + size].decode("utf-8", "ignore"))  # whole characters only
                at += size
            groups.append(group)
        out[size] = groups
    if at > len(raw):
        raise SystemExit(f"{corpus}: {at:,} bytes of text needed past the warm-up slice, {len(raw):,} there")
    return out


def peer_call(peer: str, name: str) -> Callable[[str], Any]:
    if peer == "tiktoken-np":
        from bench_encode import tiktoken_offline

        return tiktoken_offline(name).encode_to_numpy
    return load_peer(peer, name)


def child(peer: str, name: str, corpus: str, sizes: List[int]) -> Dict[str, Any]:
    import_peer(peer.replace("tiktoken-np", "tiktoken"))
    enc = peer_call(peer, name)
    enc(slices(corpus_bytes(corpus))[0])  # warm-up on the first slice, untimed
    out: Dict[str, Any] = {}
    texts = texts_of(corpus, sizes)
    for size in sizes:
        groups = texts[size]
        per_call = []
        for g in groups:
            t = time.perf_counter()
            for s in g:
                enc(s)
            per_call.append((time.perf_counter() - t) / len(g))
        check = [ids_hash(enc(s)) for s in groups[0][:20]]
        nbytes = statistics.mean(len(s.encode()) for s in groups[0])
        out[str(size)] = {"us": statistics.median(per_call) * 1e6, "bytes": nbytes, "check": check}
    return out


def run(peer: str, name: str, corpus: str, sizes: List[int]) -> Optional[Dict[str, Any]]:
    cmd = [sys.executable, HERE, "--child", json.dumps([peer, name, corpus, sizes])]
    r = subprocess.run(["taskset", "-c", "0"] + cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        print(f"  {peer} {name} {corpus}: failed ({(r.stderr.strip().splitlines() or ['?'])[-1][:120]})",
              file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encodings", nargs="+", default=["cl100k_base", "o200k_base", "gpt2"])
    ap.add_argument("--corpora", nargs="+", default=["en_austen", "code_python", "ko_prose"], choices=CORPORA)
    ap.add_argument("--sizes", nargs="+", type=int, default=SIZES)
    ap.add_argument("--peers", nargs="+", default=LISTS + ARRAYS)
    ap.add_argument("--child")
    args = ap.parse_args(argv)
    if args.child:
        peer, name, corpus, sizes = json.loads(args.child)
        print(json.dumps(child(peer, name, corpus, sizes)))
        return
    print(f"# {machine()}")
    print(f"# {versions([p.split('-')[0] for p in args.peers])}")
    print(f"# command: python benches/bench_calls.py {' '.join(sys.argv[1:])}")
    for name in args.encodings:
        for kind, peers in (("lists", [p for p in LISTS if p in args.peers]),
                            ("arrays", [p for p in ARRAYS if p in args.peers])):
            if not peers:
                continue
            rows = []
            if name not in QUICKTOK_HAS:
                peers = [p for p in peers if p != "quicktok"]  # it bundles no such encoding
            for corpus in args.corpora:
                res = {p: run(p, name, corpus, args.sizes) for p in peers}
                ours = res.get(peers[0])
                for size in args.sizes:
                    k = str(size)
                    cells, others = [], []
                    for p in peers:
                        r = res.get(p)
                        if not r:
                            cells.append("failed")
                            continue
                        wrong = ours is not None and r[k]["check"] != ours[k]["check"]
                        cells.append(f"{r[k]['us']:.2f}" + (" (wrong ids)" if wrong else ""))
                        if p != peers[0] and not wrong:
                            others.append(r[k]["us"])
                    mine = ours[k]["us"] if ours else 0.0
                    best = min(others) if others else 0.0
                    nb = ours[k]["bytes"] if ours else size
                    rows.append([corpus, f"{nb:,.0f}"] + cells + [f"{best / mine:.2f}x" if mine and best else "-"])
            table(f"{name}, {kind}: microseconds per call (one core, steady; lower is better)",
                  ["corpus", "bytes per text"] + peers + [f"{peers[0]} vs fastest peer"], rows)


if __name__ == "__main__":
    main()
