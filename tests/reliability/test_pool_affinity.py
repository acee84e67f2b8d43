"""The batch pools under concurrent callers and changing CPU affinity: a
call's pool workers are steered off the caller's CPU (src/parallel.rs), so
two callers sharing a pool must still get exact ids, and a caller whose own
affinity changes must never leave a worker pinned to a CPU it no longer
allows. How fast two callers run together is a benchmark's question
(benches/experiments/bench_wakeup.py), not a test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import bytepair
from conftest import corpus

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and at least two CPUs",
)


def batch() -> list[str]:
    """About 1 MB of 4 KB documents: enough for a two-thread batch call."""
    names = ["en_austen.txt", "en_kjv.txt", "en_pydocs.txt", "code_python.txt"]
    text = "".join(corpus(n) for n in names) * 5
    return [text[i : i + 4000] for i in range(0, len(text), 4000)]


def test_two_callers_at_once_get_exact_ids():
    enc = bytepair.get_encoding("cl100k_base")
    docs = batch()
    want = enc.encode_batch(docs, num_threads=1)
    want += [[t for d in want for t in d]]  # then the flat ids of the arrays
    got: dict[int, list[list[int]]] = {}

    def call(k: int, start: threading.Barrier) -> None:
        start.wait()
        ids, _ = enc.encode_batch_to_numpy(docs, num_threads=2)
        got[k] = enc.encode_batch(docs, num_threads=2) + [ids.tolist()]

    for _ in range(5):
        start = threading.Barrier(2)  # both calls enter the shared pool together
        threads = [threading.Thread(target=call, args=(k, start)) for k in (0, 1)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert got[0] == want and got[1] == want
        got.clear()


CHILD = textwrap.dedent(
    """
    import json, os, sys
    import bytepair
    enc = bytepair.get_encoding("cl100k_base")
    docs = json.loads(sys.stdin.read())
    want = enc.encode_batch(docs, num_threads=1)
    full = os.sched_getaffinity(0)
    a, b = sorted(full)[:2]

    def workers():
        out = {}
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm") as f:
                if f.read().startswith("bytepair-"):
                    out[int(tid)] = os.sched_getaffinity(int(tid))
        return out

    report = []
    for mask in ({a}, full, {a}, {b}, full, {b}, full):
        os.sched_setaffinity(0, mask)
        for _ in range(3):
            # lists (map_streaming) and arrays (map_par): both steer the pool
            ok = enc.encode_batch(docs, num_threads=2) == want
            ids, offsets = enc.encode_batch_to_numpy(docs, num_threads=2)
            ok &= ids.tolist() == [t for d in want for t in d] and len(offsets) == len(docs) + 1
            # a worker pinned by the steering lies within the caller's CPUs;
            # one never steered keeps the mask it was started with
            stray = {t: sorted(m) for t, m in workers().items() if m != full and not m <= mask}
            report.append({"mask": sorted(mask), "exact": ok, "stray": stray})
    print(json.dumps(report))
    """
)


def test_affinity_changes_between_calls():
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(batch()),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(out.stdout)
    assert len(report) == 21
    for r in report:
        assert r["exact"], r
        assert not r["stray"], r
