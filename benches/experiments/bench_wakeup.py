"""What a second thread is worth after the process sat idle: one batch call
on 2 threads against 1 thread, with a pause of ``gap`` before each call.

A two-thread call wakes a pool worker; the calling thread starts at once and
the worker joins when its core has woken. On a VM a halted vCPU wakes
through the host, which can take longer than a whole 1 MB batch call. The
pause before each call decides how deeply the worker's core slept; the
table shows the two-thread speed-up that is left for each pause.

Protocol: one process, the caches warm on the batch (every piece a hit, so
only the threads differ), the two thread counts alternated call by call
(order reversed every other repetition), each call after ``gap`` of sleep
and a ``gc.collect()``; median wall time per call.

    python benches/experiments/bench_wakeup.py
    python benches/experiments/bench_wakeup.py --mb 4 --gaps 0 0.02
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # no spinning BLAS thread on the second core

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))  # benches/

from bench_encode import corpus_bytes, documents, machine, slices, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoding", default="cl100k_base")
    ap.add_argument("--corpus", default="en_austen")
    ap.add_argument("--mb", type=float, default=1.0, help="text per batch call")
    ap.add_argument("--gaps", type=float, nargs="+", default=[0.0, 0.001, 0.005, 0.02, 0.1])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()

    import bytepair

    enc = bytepair.get_encoding(args.encoding)
    docs = [d for part in slices(corpus_bytes(args.corpus)) for d in documents(part)]
    batch, size = [], 0
    for d in docs:
        if size >= args.mb * 1e6:
            break
        batch.append(d)
        size += len(d.encode())
    for k in (1, 2, 1, 2):  # pool threads started, caches warm
        enc.encode_batch_to_numpy(batch, num_threads=k)
    print(machine())
    rows = []
    for gap in args.gaps:
        times = {1: [], 2: []}
        for rep in range(args.repeat):
            for k in ((1, 2) if rep % 2 == 0 else (2, 1)):
                gc.collect()
                time.sleep(gap)
                t = time.perf_counter()
                enc.encode_batch_to_numpy(batch, num_threads=k)
                times[k].append(time.perf_counter() - t)
        one, two = statistics.median(times[1]), statistics.median(times[2])
        rows.append([f"{gap * 1e3:g}", f"{one * 1e3:.2f}", f"{two * 1e3:.2f}", f"{one / two:.2f}x"])
    table(f"{args.encoding}, {args.corpus}: one batch call of {size / 1e6:.2f} MB, every piece a hit, "
          f"median of {args.repeat}",
          ["pause before each call (ms)", "1 thread (ms)", "2 threads (ms)", "2 threads / 1"], rows)


if __name__ == "__main__":
    main()
