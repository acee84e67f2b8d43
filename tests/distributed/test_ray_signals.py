"""Every way a `--engine ray` command ends (SIGINT, SIGTERM, the driver
killed) stops the local Ray it started, and leaves no temporary directory,
temporary file or half-written output; an interrupted encode-dataset resumes.

Real signals to the real `bytepair` executable, as a user's Ctrl-C or
`kill` would send them. Each run starts its own Ray (a few seconds each).
Skipped when Ray is not installed (a failure under BYTEPAIR_REQUIRE_OPTIONAL=1).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import bytepair
from bytepair.distributed import encode_dataset
from conftest import optional

ray = optional("ray")
pytestmark = pytest.mark.ray

_EXE = os.path.join(os.path.dirname(sys.executable), "bytepair")
_WORKER_TMP = re.compile(r"\.bytepair-\d+-\d+\.tmp\Z")


def _letters(nbytes: int) -> str:
    """Random 10-letter words: almost every chunk distinct, so counting spills."""
    h = os.urandom(nbytes // 2).hex().translate(str.maketrans("0123456789", "ghijklmnop"))
    return " ".join(h[i:i + 10] for i in range(0, len(h), 10))


class RayRun:
    """One CLI run with its own TMPDIR (bytepair's temporary files), a short
    RAY_TMPDIR (Ray's session folder: its socket paths must stay under 107
    bytes) and a mark in its environment, inherited by every process Ray
    starts for it, so that any left running is found."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.ray_tmp = Path(tempfile.mkdtemp(prefix="r", dir=os.environ.get("BYTEPAIR_TEST_TMP")))
        self.mark = f"BYTEPAIR_RAY_SIGNAL_RUN={self.ray_tmp.name}"
        key, value = self.mark.split("=")
        self.env = dict(os.environ, TMPDIR=str(self.tmp), RAY_TMPDIR=str(self.ray_tmp), **{key: value},
                        PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(bytepair.__file__)),
                                                    os.environ.get("PYTHONPATH", "")]))

    def start(self, *argv: str) -> subprocess.Popen:
        return subprocess.Popen([_EXE, *argv, "--engine", "ray", "--workers", "2", "--no-progress"], env=self.env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def processes(self) -> dict:
        """pid -> command line of the run's live processes."""
        found = {}
        for d in Path("/proc").glob("[0-9]*"):
            try:
                mine = self.mark.encode() in (d / "environ").read_bytes().split(b"\0")
                if mine and (d / "stat").read_text().rsplit(") ", 1)[-1][0] != "Z":
                    found[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ")[:120].decode(
                        errors="replace")
            except OSError:
                continue
        return found

    def left_running(self, within: float) -> list:
        """The command lines of the run's processes still alive ``within`` seconds from now."""
        deadline = time.monotonic() + within
        while (left := self.processes()) and time.monotonic() < deadline:
            time.sleep(0.1)
        return sorted(left.values())

    def ours(self) -> list:
        return sorted(x.name for x in self.tmp.iterdir())

    def close(self) -> None:
        for _ in range(50):  # a process still exiting may write one more log file
            shutil.rmtree(self.ray_tmp, ignore_errors=True)
            if not self.ray_tmp.exists():
                break
            time.sleep(0.1)


@pytest.fixture
def run(tmp_path):
    r = RayRun(tmp_path)
    yield r
    r.left_running(10)
    for pid in r.processes():  # never leave this run's processes behind, even when the test failed
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    r.close()


def _when(p: subprocess.Popen, ready, what: str) -> None:
    deadline = time.monotonic() + 120
    while not ready() and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert p.poll() is None, f"finished before {what}; make the input larger"
    assert ready(), f"not {what} after 120 s"


def _ends(p: subprocess.Popen, sig: int) -> tuple:
    """Sends ``sig``; returns (exit status, seconds to exit, stderr)."""
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    return p.returncode, time.monotonic() - t0, err.decode("utf-8", "replace")


def _one_line(err: str, code: int) -> None:
    """The run's own words: one line, `bytepair: interrupted` for Ctrl-C and
    `bytepair: terminated` for SIGTERM; no traceback, no fatal-signal dump
    (Ray's own start-up lines may come before)."""
    assert "Traceback" not in err and "SIGTERM received" not in err and "*** " not in err, err
    ours = [ln for ln in err.splitlines() if ln.startswith("bytepair:")]
    assert ours == ["bytepair: interrupted" if code == 130 else "bytepair: terminated"], err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_ray_count_chunks_stops_ray_and_removes_the_spills(run, tmp_path, sig):
    """A real signal while the Ray tasks spill (`--memory 16MB`): the command
    exits at once with 143 / 130, the workers' spill directories are gone from
    TMPDIR, no counts file is written, and no Ray process stays."""
    shards = []
    for k in range(2):
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text(_letters(30_000_000), encoding="utf-8")
    out = tmp_path / "c.bpc"
    p = run.start("count-chunks", *map(str, shards), "-o", str(out), "--memory", "16MB")
    _when(p, lambda: any(n.startswith("bytepair-counts-") for n in run.ours()), "spilling")
    code, secs, err = _ends(p, sig)
    assert code == 128 + sig, err
    assert secs < 20, f"took {secs:.1f} s to exit"
    _one_line(err, code)
    assert run.left_running(10) == []
    assert run.ours() == []
    assert not out.exists()


def test_killed_ray_driver_takes_its_cluster_and_spills_along(run, tmp_path):
    """The driver killed outright (SIGKILL: no handler runs): the local Ray it
    started (GCS, raylet, workers) stops, and the spill directories go."""
    shards = []
    for k in range(2):
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text(_letters(30_000_000), encoding="utf-8")
    p = run.start("count-chunks", *map(str, shards), "-o", str(tmp_path / "c.bpc"), "--memory", "16MB")
    _when(p, lambda: any(n.startswith("bytepair-counts-") for n in run.ours()), "spilling")
    assert len(run.processes()) > 2  # the driver, Ray's own processes and its workers
    code, _, _ = _ends(p, signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert run.left_running(15) == []
    assert run.ours() == []
    assert not (tmp_path / "c.bpc").exists()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_ray_encode_dataset_then_resume(run, tmp_path, sig):
    """A real signal while the Ray tasks write token files: no temporary file
    in the output folder, every file there is whole; the same command again
    finishes the rest, with the ids of a run never interrupted."""
    docs = [_letters(4_000) for _ in range(1500)]
    shards = []
    for k in range(4):
        shards.append(tmp_path / f"s{k}.txt")
        shards[-1].write_text("\n\n".join(docs[k::4] * 3), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["encode-dataset", *map(str, shards), "-e", "gpt2", "-o", str(out)]
    p = run.start(*argv)
    # a token file being written by a Ray worker (`.bytepair-PID-N.tmp`), not the driver's manifest
    _when(p, lambda: out.is_dir() and any(_WORKER_TMP.match(x.name) for x in out.iterdir()), "writing")
    code, secs, err = _ends(p, sig)
    assert code == 128 + sig, err
    assert secs < 20, f"took {secs:.1f} s to exit"
    _one_line(err, code)
    assert [x.name for x in out.iterdir() if x.name.endswith(".tmp")] == []
    assert run.left_running(10) == []
    assert run.ours() == []
    again = run.start(*argv)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    want = tmp_path / "want"
    encode_dataset(shards, want, tokenizer="gpt2", progress=False)
    names = sorted(x.name for x in want.iterdir() if x.name != "manifest.json")
    assert sorted(x.name for x in out.iterdir() if x.name != "manifest.json") == names
    for n in names:
        assert (out / n).read_bytes() == (want / n).read_bytes(), n
    assert run.left_running(10) == []
    assert run.ours() == []
