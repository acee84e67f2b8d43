"""Thread counts far past the cores: clamped to 4 per core (``bytepair._core.MAX_THREADS``),
so ``--threads 100000`` starts no more threads than that and gives the same result."""

from __future__ import annotations

import time

from cli_run import bytepair_cli

import bytepair
from conftest import DATA


def test_threads_far_past_the_cores_train_fast_and_the_same(tmp_path):
    # thread counts are clamped to 4 per core: 100 000 threads start no more
    # threads than that, and the merges never depend on the number
    (tmp_path / "t.txt").write_bytes((DATA / "en_austen.txt").read_bytes()[:20000])
    r1 = bytepair_cli("train", "t.txt", "--vocab-size", "300", "--threads", "1", "-q", "-o", "one.json", cwd=tmp_path)
    t = time.monotonic()
    r2 = bytepair_cli("train", "t.txt", "--vocab-size", "300", "--threads", "100000", "-q", "-o", "many.json",
                      cwd=tmp_path, timeout=60)
    took = time.monotonic() - t
    assert r1.returncode == 0 and r2.returncode == 0, r2.stderr
    assert bytepair.load(tmp_path / "one.json").merges == bytepair.load(tmp_path / "many.json").merges
    # a run of this size takes well under a second; 100 000 threads took minutes
    assert took < 20, took
