"""Temporary files and directories exist only while needed, under the
temporary directory the user set (never creating it), and are gone after
success, an error or a signal."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

import bytepair
from bytepair import _core
from bytepair.errors import TrainingError


def _words(n: int, seed: int = 3) -> str:
    rnd = random.Random(seed)
    return " ".join("".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(3, 9))) for _ in range(n))


@pytest.fixture
def tmpdir_env(tmp_path, monkeypatch):
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    return d


def test_counting_that_fits_makes_no_directory(tmpdir_env):
    c = _core.ChunkCounter("o200k", [], None, 2, memory_limit=1 << 30)
    c.feed_texts(["hello world " * 1000])
    assert list(tmpdir_env.iterdir()) == []  # while the counter is alive
    bytepair.train("hello world " * 100, 260, memory_limit="1GB")
    bytepair.train("hello world " * 100, 260)
    assert list(tmpdir_env.iterdir()) == []


def test_spill_directory_is_removed_after_the_merge(tmpdir_env):
    c = _core.ChunkCounter("o200k", [], None, 1, memory_limit=1 << 20)
    c.feed_texts([_words(150_000)])
    assert c.spilled_runs > 0
    assert [p.name.split("-")[1] for p in tmpdir_env.iterdir()] == ["counts"]
    c.finish()
    assert list(tmpdir_env.iterdir()) == []


def test_missing_temporary_directory_is_an_error_not_created(tmp_path, monkeypatch):
    missing = tmp_path / "no" / "such"
    monkeypatch.setenv("TMPDIR", str(missing))
    bytepair.train("hello world " * 100, 260, memory_limit="1GB")  # fits: no directory needed
    c = _core.ChunkCounter("o200k", [], None, 1, memory_limit=1 << 20)
    with pytest.raises(TrainingError, match="does not exist"):
        c.feed_texts([_words(150_000)])
    assert not (tmp_path / "no").exists()


def test_sigint_while_spilling_leaves_no_directory(tmp_path):
    """A real SIGINT or SIGTERM to `bytepair train` while it spills: the run
    files and their directory are gone when it exits."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    corpus = tmp_path / "c.txt"
    corpus.write_text(_words(3_000_000), encoding="utf-8")
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(bytepair.__file__)), os.environ.get("PYTHONPATH", "")]))
    exe = os.path.join(os.path.dirname(sys.executable), "bytepair")
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([exe, "train", str(corpus), "-o", str(tmp_path / "t.json"), "--memory", "16MB",
                              "--threads", "1", "--vocab-size", "300"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not any(tmp.iterdir()) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.poll() is None, "finished before spilling; make the corpus larger"
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        assert p.returncode != 0
        assert list(tmp.iterdir()) == [], (sig, err)
        assert not (tmp_path / "t.json").exists()
