"""Thread counts far past the cores: clamped to 4 per core (``bytepair._core.MAX_THREADS``),
so ``--threads 100000`` starts no more threads than that and gives the same result."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_run import bytepair_cli

import bytepair
from conftest import DATA

# Counts the pool workers (threads named `bytepair-...`, Linux: /proc/self/task) after
# training with 100,000 threads asked for in a new process; pools are kept, so every
# worker started is still there.
CHILD = textwrap.dedent(
    """
    import os, sys
    import bytepair
    from bytepair import _core

    def workers():
        names = []
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm") as f:
                names.append(f.read())
        return sum(n.startswith("bytepair-") for n in names)

    text = open(sys.argv[1], encoding="utf-8").read()
    before = workers()
    bytepair.train(text, 300, num_threads=100_000, progress=False)
    print(before, workers(), _core.MAX_THREADS)
    """
)


def test_threads_far_past_the_cores_give_the_same_merges(tmp_path):
    # the merges never depend on the number of threads, clamped or not
    (tmp_path / "t.txt").write_bytes((DATA / "en_austen.txt").read_bytes()[:20000])
    r1 = bytepair_cli("train", "t.txt", "--vocab-size", "300", "--threads", "1", "-q", "-o", "one.json", cwd=tmp_path)
    r2 = bytepair_cli(
        "train", "t.txt", "--vocab-size", "300", "--threads", "100000", "-q", "-o", "many.json", cwd=tmp_path, timeout=60
    )
    assert r1.returncode == 0 and r2.returncode == 0, r2.stderr
    assert bytepair.load(tmp_path / "one.json").merges == bytepair.load(tmp_path / "many.json").merges


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
def test_threads_far_past_the_cores_start_at_most_the_cap(tmp_path):
    corpus = tmp_path / "t.txt"
    corpus.write_bytes((DATA / "en_austen.txt").read_bytes()[:20000])
    where = str(Path(bytepair.__file__).resolve().parents[1])
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(corpus)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": where, "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    before, after, cap = map(int, r.stdout.split())
    # the counting pool's workers: some, and at most the cap (without the clamp, 100,000)
    assert before == 0 and 0 < after <= cap, (before, after, cap)
