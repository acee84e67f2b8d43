"""How the length of one batch call decides its two-thread speed-up on the
shared benchmark VM, with the host's steal time beside every figure.

The same documents (1-10 KB, cut from one corpus and repeated to ``--mb`` MB,
every piece warm in both threads' caches before timing) are encoded by
back-to-back ``encode_batch_to_numpy`` calls of ``--sizes`` MB each, on one
thread and on two (interleaved, the order reversed every round). A short call
means the second thread wakes and sleeps once per call; a long one keeps it
busy. Per call size the table gives both speeds, their paired ratio and the
share of the VM's CPU time the hypervisor took (``steal`` in ``/proc/stat``)
while each ran.

The control row runs two single-thread processes at once, one pinned to each
core, each doing the shortest calls continuously: it tells whether the host
gives this VM both cores when both are kept busy.

    python benches/experiments/bench_callsize.py --encoding cl100k_base --corpus en_kjv
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benches/
from bench_encode import Steal, batch_documents, corpus_bytes, machine, table

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus_docs(corpus: str, mb: float) -> List[str]:
    """The corpus's 1-10 KB documents, repeated to ``mb`` MB."""
    docs = batch_documents([corpus_bytes(corpus).decode("utf-8", "ignore")])[0]
    if not docs:
        sys.exit(f"{corpus}: no documents")
    out: List[str] = []
    size = 0
    for d in itertools.cycle(docs):
        if size >= mb * 1e6:
            break
        out.append(d)
        size += len(d.encode())
    return out


def groups(docs: List[str], call_mb: float) -> List[List[str]]:
    """Consecutive documents packed into calls of about ``call_mb`` MB."""
    out: List[List[str]] = [[]]
    size = 0
    for d in docs:
        out[-1].append(d)
        size += len(d.encode())
        if size >= call_mb * 1e6:
            out.append([])
            size = 0
    return [g for g in out if g]


def run_calls(enc, calls: List[List[str]], threads: int) -> float:
    """Seconds (wall) to encode every call back to back."""
    gc.collect()
    t = time.perf_counter()
    for g in calls:
        enc.encode_batch_to_numpy(g, num_threads=threads)
    return time.perf_counter() - t


def solo(args: argparse.Namespace) -> None:
    """Child of the control row: one thread, the shortest calls, for
    ``--seconds``; prints MB/s as JSON."""
    import bytepair

    enc = bytepair.get_encoding(args.encoding)
    docs = corpus_docs(args.corpus, args.mb)
    calls = groups(docs, min(args.sizes))
    mb = sum(len(d.encode()) for d in docs) / 1e6
    run_calls(enc, calls, 1)  # warm
    done, t0 = 0.0, time.perf_counter()
    while time.perf_counter() - t0 < args.seconds:
        run_calls(enc, calls, 1)
        done += mb
    print(json.dumps({"mbps": done / (time.perf_counter() - t0)}))


def control(args: argparse.Namespace) -> List[str]:
    """Two pinned single-thread processes at once, then one alone."""
    cmd = [sys.executable, os.path.join(HERE, "bench_callsize.py"), "--solo", "--encoding", args.encoding,
           "--corpus", args.corpus, "--mb", str(args.mb), "--seconds", str(args.seconds),
           "--sizes"] + [str(s) for s in args.sizes]
    steal = Steal()
    steal.start()
    procs = [subprocess.Popen(["taskset", "-c", str(c)] + cmd, stdout=subprocess.PIPE, text=True) for c in (0, 1)]
    both = [json.loads(p.communicate()[0])["mbps"] for p in procs]
    share_both = steal.share()
    steal.start()
    alone = json.loads(subprocess.run(["taskset", "-c", "0"] + cmd, stdout=subprocess.PIPE, text=True,
                                      check=True).stdout)["mbps"]
    share_alone = steal.share()
    return [f"control: 2 processes x 1 thread, {min(args.sizes)} MB calls",
            f"{alone:.0f} (alone)", f"{both[0]:.0f} + {both[1]:.0f}",
            f"{sum(both) / alone:.2f}x", share_alone, share_both]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="cl100k_base")
    ap.add_argument("--corpus", default="en_kjv")
    ap.add_argument("--mb", type=float, default=16.0, help="MB encoded per timed repetition")
    ap.add_argument("--sizes", nargs="+", type=float, default=[0.02, 0.1, 0.5, 2.0, 16.0],
                    help="MB per batch call")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=8.0, help="length of each control process")
    ap.add_argument("--solo", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.solo:
        return solo(args)

    import bytepair

    enc = bytepair.get_encoding(args.encoding)
    docs = corpus_docs(args.corpus, args.mb)
    mb = sum(len(d.encode()) for d in docs) / 1e6
    print(f"machine: {machine()}; bytepair {bytepair.__version__}; {args.encoding}, {args.corpus}, "
          f"{mb:.1f} MB per repetition")
    rows = []
    for size in args.sizes:
        calls = groups(docs, size)
        for k in (1, 2):  # warm every worker's cache on these documents
            run_calls(enc, calls, k)
        rates: Dict[int, List[float]] = {1: [], 2: []}
        steal = {1: Steal(), 2: Steal()}
        shares: Dict[int, List[str]] = {1: [], 2: []}
        for r in range(args.repeat):
            for k in ((1, 2) if r % 2 == 0 else (2, 1)):
                steal[k].start()
                rates[k].append(mb / run_calls(enc, calls, k))
                shares[k].append(steal[k].share())
        ratio = statistics.median(b / a for a, b in zip(rates[1], rates[2]))
        rows.append([f"{size:g} MB per call ({len(calls)} calls)", f"{statistics.median(rates[1]):.0f}",
                     f"{statistics.median(rates[2]):.0f}", f"{ratio:.2f}x",
                     " / ".join(shares[1]), " / ".join(shares[2])])
    rows.append(control(args))
    table(f"{args.encoding}, {args.corpus}: back-to-back encode_batch_to_numpy calls, wall time, median of "
          f"{args.repeat} (MB/s; 2 / 1 is the median of the per-repetition ratios; steal per repetition)",
          ["calls", "1 thread", "2 threads", "2 / 1", "host steal, 1 thread", "host steal, 2 threads"], rows)


if __name__ == "__main__":
    main()
