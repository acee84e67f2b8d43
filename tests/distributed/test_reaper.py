"""The reaper that stops a local Ray with its driver (no Ray needed): when the
driver's pipe closes it stops every process carrying its token and their
descendants (even one whose environment no longer shows the token), SIGKILLs
one that ignores SIGTERM, removes the spill directories of those that did not
unwind, and never touches any other process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bytepair.distributed.engines import reaper

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="the reaper reads /proc (Linux)")

# a carrier of the token that starts a child without it in its environment, then waits
PARENT = ("import os, subprocess, sys, time\n"
          "env = {k: v for k, v in os.environ.items() if k != 'BYTEPAIR_RAY_OWNER'}\n"
          "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], env=env)\n"
          "print(c.pid, flush=True)\n"
          "time.sleep(60)\n")
STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print(1, flush=True); time.sleep(60)"
# one that ends at SIGTERM without unwinding (as a Ray worker does when its raylet has gone first)
QUITTER = "import os, signal, time; signal.signal(signal.SIGTERM, lambda *a: os._exit(0)); print(1, flush=True); time.sleep(60)"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_reaper_stops_the_token_tree_and_nothing_else():
    token = f"test-{os.getpid()}-{time.monotonic_ns()}"
    r, w = os.pipe()
    watcher = subprocess.Popen([sys.executable, "-S", "-I", reaper.__file__, token], stdin=r,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(r)
    marked = dict(os.environ, **{reaper.OWNER_ENV: token})
    parent = subprocess.Popen([sys.executable, "-c", PARENT], env=marked, stdout=subprocess.PIPE, text=True)
    stubborn = subprocess.Popen([sys.executable, "-c", STUBBORN], env=marked, stdout=subprocess.PIPE, text=True)
    quitter = subprocess.Popen([sys.executable, "-c", QUITTER], env=marked, stdout=subprocess.PIPE, text=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    tmp = Path(os.environ.get("TMPDIR") or "/tmp")
    spill = tmp / f"bytepair-counts-{stubborn.pid}-0-1"
    quit_spill = tmp / f"bytepair-counts-{quitter.pid}-0-1"
    kept = tmp / f"bytepair-counts-{other.pid}-0-1"
    for d in (spill, quit_spill, kept):
        (d / "run").mkdir(parents=True)
    child = None
    try:
        child = int(parent.stdout.readline())
        stubborn.stdout.readline()  # SIGTERM is ignored from here on
        quitter.stdout.readline()
        time.sleep(2 * reaper.POLL + 0.5)  # the reaper has seen the child while its parent lives
        os.close(w)  # the "driver" ends
        w = None
        t0 = time.monotonic()
        watcher.wait(timeout=2 * reaper.GRACE + 10)
        parent.wait(timeout=5)
        stubborn.wait(timeout=5)
        quitter.wait(timeout=5)
        assert time.monotonic() - t0 >= reaper.GRACE - 1  # the stubborn one lasted until SIGKILL
        assert parent.returncode == -15 and stubborn.returncode == -9 and quitter.returncode == 0
        deadline = time.monotonic() + 5
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
        assert other.poll() is None
        # the directories of those that did not unwind, and no other process's
        assert not spill.exists() and not quit_spill.exists() and kept.exists()
    finally:
        if w is not None:
            os.close(w)
        for p in (parent, stubborn, quitter, other, watcher):
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in (parent.stdout, stubborn.stdout, quitter.stdout):
            f.close()
        if child is not None and _alive(child):
            os.kill(child, 9)
        for d in (spill, quit_spill, kept):
            shutil.rmtree(d, ignore_errors=True)
