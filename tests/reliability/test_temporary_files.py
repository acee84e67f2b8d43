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


def _cli_env(tmp: object) -> dict:
    return dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join(
        [os.path.dirname(os.path.dirname(bytepair.__file__)), os.environ.get("PYTHONPATH", "")]))


_EXE = os.path.join(os.path.dirname(sys.executable), "bytepair")


def _signal_when(p: subprocess.Popen, ready, sig: int, what: str) -> str:
    """Sends ``sig`` to ``p`` once ``ready()`` holds; returns its stderr."""
    deadline = time.monotonic() + 90
    while not ready() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, f"finished before {what}; make the input larger"
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode != 0
    return err.decode("utf-8", "replace")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_count_chunks_removes_the_workers_spill_directories(tmp_path, sig):
    """A real signal to `bytepair count-chunks --memory` while its worker
    processes spill: the driver stops them, and their run files and directories
    are gone from TMPDIR when it exits."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    shards = []
    for k in range(2):
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text(_words(1_500_000, seed=k), encoding="utf-8")
    p = subprocess.Popen([_EXE, "count-chunks", *map(str, shards), "-o", str(tmp_path / "c.bpc"), "--memory", "16MB",
                          "--workers", "2", "--no-progress"], env=_cli_env(tmp), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = _signal_when(p, lambda: any(tmp.iterdir()), sig, "spilling")
    assert list(tmp.iterdir()) == [], err
    assert not (tmp_path / "c.bpc").exists()
    assert "Traceback" not in err, err
    assert p.returncode == 128 + sig
    assert err.splitlines() == ["bytepair: terminated" if sig == signal.SIGTERM else "bytepair: interrupted"], err


def test_convert_refuses_a_missing_temporary_directory(tmp_path):
    """`convert --to transformers` copies the folder into a private temporary
    directory: a TMPDIR naming no folder is refused in one line, naming it,
    never replaced by the system's /tmp nor created."""
    pytest.importorskip("transformers")
    missing = tmp_path / "no" / "such"
    p = subprocess.run([_EXE, "convert", "gpt2", "--to", "transformers", str(tmp_path / "out")],
                       env=_cli_env(missing), capture_output=True, text=True, timeout=300)
    assert p.returncode == 2, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("bytepair:")]
    assert len(lines) == 1 and str(missing) in lines[0] and "TMPDIR" in lines[0], p.stderr
    assert not (tmp_path / "no").exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == []  # no output folder, no temporary file


def test_sigterm_during_convert_leaves_no_copy_and_no_temporary_file(tmp_path):
    """A real SIGTERM while transformers loads the private copy of the written
    folder: the copy is gone from TMPDIR, and the destination holds nothing."""
    pytest.importorskip("transformers")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    p = subprocess.Popen([_EXE, "convert", "gpt2", "--to", "transformers", str(dest / "out")], env=_cli_env(tmp),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _signal_when(p, lambda: any(tmp.iterdir()), signal.SIGTERM, "copying the folder")
    assert list(tmp.iterdir()) == []
    assert list(dest.iterdir()) == []


def test_sigterm_during_encode_dataset_leaves_no_temporary_file(tmp_path):
    """A real SIGTERM while `bytepair encode-dataset` writes its token files: no
    `.bytepair-*.tmp` file stays in the output folder and nothing in TMPDIR."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    shards = []
    # tens of MB, so that a fast machine is still writing when the signal goes
    docs = [_words(2000, seed=j) for j in range(150)]
    for k in range(4):
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text("\n\n".join(docs * 5), encoding="utf-8")
    out = tmp_path / "out"
    p = subprocess.Popen([_EXE, "encode-dataset", *map(str, shards), "-e", "gpt2", "-o", str(out), "--no-progress"],
                         env=_cli_env(tmp), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _signal_when(p, lambda: out.is_dir() and any(x.name.endswith(".tmp") for x in out.iterdir()), signal.SIGTERM,
                 "writing")
    assert [x.name for x in out.iterdir() if x.name.endswith(".tmp")] == []
    assert list(tmp.iterdir()) == []


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                continue
    return out


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_killed_driver_stops_its_workers_and_their_spills(tmp_path):
    """The driver of a local-engine job killed outright (SIGKILL: no handler
    runs): its worker processes stop at once instead of finishing their
    tasks, and their spill directories are gone from TMPDIR."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    shards = []
    for k in range(2):
        h = os.urandom(15_000_000).hex().translate(str.maketrans("0123456789", "ghijklmnop"))  # letters: one chunk a word
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text(" ".join(h[i:i + 10] for i in range(0, len(h), 10)), encoding="utf-8")
    code = ("import sys\nfrom bytepair.distributed import count_chunks, LocalEngine\n"
            "count_chunks(sys.argv[1:], engine=LocalEngine(2), memory_limit='16MB', progress=False)\n")
    # no pipes: the workers would hold them open, and reading them would wait for the workers
    p = subprocess.Popen([sys.executable, "-c", code, *map(str, shards)], env=_cli_env(tmp),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 90
    while not any(tmp.iterdir()) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, "finished before spilling; make the shards larger"
    workers = _children(p.pid)
    p.kill()
    p.wait(timeout=30)
    stop = time.monotonic() + 3
    while any(_running(w) for w in workers) and time.monotonic() < stop:
        time.sleep(0.05)
    assert not any(_running(w) for w in workers), "the workers run on after their driver died"
    assert list(tmp.iterdir()) == []
