"""Stops the processes of a local Ray when the program that started it ends,
however it ends (SIGKILL included).

Ray ties its GCS and raylet to the driver, but the agents the raylet starts
outlive a killed driver by a minute or more (they try to report to a GCS that
is gone). :class:`~bytepair.distributed.engines.ray.RayEngine` starts this
file as a small process of its own (standard library only, run by path) before
it starts Ray, with a token that the processes Ray starts inherit in their
environment (``BYTEPAIR_RAY_OWNER``). While the driver lives, the reaper notes
every process carrying the token and every descendant of those (the agents
rewrite their environment's memory with their title, so they are found as the
raylet's children). When its standard input closes (the driver exited, or
died), it sends SIGTERM to each noted process still running (a Ray worker
unwinds its task, so its temporary files go), and SIGKILL to any left after
:data:`GRACE` seconds, then removes the counting spill directories of every
noted process (one that unwound has none left; one killed did not unwind). A
process is known by its pid and start time, so a reused pid is never
signalled, nor its directories removed.

Linux only (it reads ``/proc``); elsewhere the engine starts no reaper.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import time
from typing import Dict, Iterable, List, Optional, Set, Tuple

#: The environment variable that marks the processes of one local Ray.
OWNER_ENV = "BYTEPAIR_RAY_OWNER"
#: Seconds between SIGTERM and SIGKILL.
GRACE = 5.0
#: Seconds between two looks for new processes while the driver lives.
POLL = 1.0

Proc = Tuple[int, str]  # (pid, start time in clock ticks since boot)


def _stat(pid: int) -> Tuple[int, str, str]:
    """(parent pid, state, start time) of ``pid``; OSError if it is gone."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    try:
        return int(fields[1]), fields[0], fields[19]
    except (IndexError, ValueError) as e:
        raise OSError(f"unreadable /proc/{pid}/stat") from e


def _carries(pid: int, mark: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return mark in f.read().split(b"\0")
    except OSError:
        return False


def owned(token: str, carriers: Optional[Dict[Proc, bool]] = None) -> Set[Proc]:
    """The live processes carrying ``OWNER_ENV=token``, and all their
    descendants. ``carriers`` remembers which processes carry the token
    between calls, so each process's environment is read once."""
    mark = f"{OWNER_ENV}={token}".encode()
    known = {} if carriers is None else carriers
    children: Dict[int, List[int]] = {}
    info: Dict[int, Tuple[str, str]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            ppid, state, start = _stat(pid)
        except OSError:
            continue
        if state != "Z" and pid != os.getpid():
            children.setdefault(ppid, []).append(pid)
            info[pid] = (state, start)
    for proc in [p for p in known if info.get(p[0], ("", ""))[1] != p[1]]:
        del known[proc]  # ended
    todo = []
    for pid, (_, start) in info.items():
        if (pid, start) not in known:
            known[(pid, start)] = _carries(pid, mark)
        if known[(pid, start)]:
            todo.append(pid)
    found: Set[Proc] = set()
    while todo:
        pid = todo.pop()
        if pid in info and (pid, info[pid][1]) not in found:
            found.add((pid, info[pid][1]))
            todo.extend(children.get(pid, ()))
    return found


def alive(procs: Iterable[Proc]) -> Set[Proc]:
    """Those of ``procs`` still running (same pid and start time, not a zombie)."""
    out = set()
    for pid, start in procs:
        try:
            _, state, now = _stat(pid)
        except OSError:
            continue
        if now == start and state != "Z":
            out.add((pid, start))
    return out


def reap(procs: Set[Proc], grace: float = GRACE) -> None:
    """SIGTERM to ``procs``, SIGKILL to those left after ``grace`` seconds;
    then the counting spill directories of every one of ``procs`` that is gone
    are removed (one that unwound has none left; one killed, by this or by Ray
    when its raylet ended first, did not unwind)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = alive(procs)
        for pid, _ in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = alive(left)
        if not left:
            break
    for pid, start in procs:
        if not _reused(pid, start):
            remove_spills(pid)


def _reused(pid: int, start: str) -> bool:
    """Whether ``pid`` now names another process than the one that started at ``start``."""
    try:
        return _stat(pid)[2] != start
    except OSError:
        return False


def remove_spills(pid: int) -> None:
    """Removes the counting spill directories of process ``pid`` (the core
    names them ``bytepair-counts-PID-...`` in ``$TMPDIR``, else ``/tmp``)."""
    parent = os.environ.get("TMPDIR") or "/tmp"
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if name.startswith(f"bytepair-counts-{pid}-"):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)


def main(argv: List[str]) -> int:
    # Ctrl-C and a SIGTERM to the whole process group reach the reaper too: it
    # ignores them, and ends when the driver has gone.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    token = argv[1]
    seen: Set[Proc] = set()
    carriers: Dict[Proc, bool] = {}
    fd = sys.stdin.fileno()
    while True:
        try:
            ready, _, _ = select.select([fd], [], [], POLL)
            if ready and not os.read(fd, 1 << 16):
                break
        except OSError:
            break
        seen = alive(seen) | owned(token, carriers)
    reap(seen | owned(token, carriers))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
