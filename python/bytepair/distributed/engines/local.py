"""The ``"local"`` engine: a pool of worker processes on this machine (standard
library only), started with ``spawn``, one task at a time per worker, kept warm
between calls."""

from __future__ import annotations

import atexit
import contextlib
import functools
import multiprocessing
import os
import signal
import sys
import traceback
from collections import deque
from multiprocessing.connection import wait
from typing import Any, Deque, Dict, Iterator, List, Optional, Sequence, Tuple

from ...processes import stop_with_parent
from .base import (
    Engine,
    Outcome,
    TaskFn,
    call_task,
    check_retries,
    check_workers,
    describe_error,
    in_order,
)
from .reaper import remove_spills


class _Stopped(BaseException):
    """Raised in a worker by SIGTERM (the driver abandoning a run): the task
    unwinds, so its temporary files and spill directories are removed."""


def _stop(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: a repeat must not interrupt the unwinding
    raise _Stopped


def _local_worker(conn: Any, threads: int, parent: int) -> None:  # the body of one worker process
    signal.signal(signal.SIGTERM, _stop)
    # the task unwinds when the driver dies, whatever kills it
    stop_with_parent(parent, signal.SIGTERM)
    try:
        _serve_tasks(conn, threads)
    except (_Stopped, BrokenPipeError):  # stopped, or the driver is gone: nothing to report to
        return


def _serve_tasks(conn: Any, threads: int) -> None:
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        fn, shared, args = msg
        try:
            out = call_task(fn, shared, args, threads)
        except _Stopped:
            raise
        except BaseException as e:  # noqa: BLE001 - report, never kill the worker silently
            out = Outcome(False, error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        try:
            conn.send(out)
        except BrokenPipeError:
            raise
        except Exception as e:  # noqa: BLE001 - the result does not pickle
            conn.send(
                Outcome(False, error=f"the task's result cannot be sent back ({describe_error(e)})")
            )


def _remove_spills(pid: Optional[int]) -> None:
    """Removes the counting spill directories a dead worker ``pid`` left in the
    temporary directory (see :func:`.reaper.remove_spills`)."""
    if pid is not None:
        remove_spills(pid)


def _refers_to_main(obj: Any) -> bool:
    """Whether ``obj`` (or a callable inside a tuple / functools.partial) is
    defined in the ``__main__`` script, so workers must import that script."""
    if isinstance(obj, (tuple, list)):
        return any(_refers_to_main(x) for x in obj)
    if isinstance(obj, functools.partial):
        return _refers_to_main(obj.func) or _refers_to_main(obj.args)
    return callable(obj) and getattr(obj, "__module__", None) == "__main__"


@contextlib.contextmanager
def _main_hidden(hide: bool) -> Iterator[None]:
    """Starts ``spawn`` workers without re-running the ``__main__`` script.

    ``spawn`` normally re-imports the driver's main script in every worker, so a
    script without an ``if __name__ == "__main__":`` guard would start the job
    again inside each worker. bytepair's task functions live in bytepair, so the
    workers do not need the script; only a reader defined in the script does
    (then the script is imported, and needs the guard, as with any pool).
    """
    main = sys.modules.get("__main__")
    if not hide or main is None:
        yield
        return
    saved: Dict[str, Any] = {
        k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__
    }
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


class _Slot:
    def __init__(self, ctx: Any, threads: int, hide_main: bool = True) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(target=_local_worker, args=(child, threads, os.getpid()), daemon=True)
        with _main_hidden(hide_main):
            self.proc.start()
        child.close()
        self.task: Optional[int] = None
        self.asked = False

    def ask_stop(self) -> None:
        """Asks the worker to exit: idle, through its pipe; busy (``self.task``
        set), by SIGTERM, which unwinds its task (temporary files removed)."""
        if self.asked:
            return
        self.asked = True
        try:
            if self.task is None:
                self.conn.send(None)
            elif self.proc.is_alive():
                self.proc.terminate()
        except (OSError, ValueError):
            pass

    def stop(self, timeout: float = 5.0) -> None:
        """Stops the worker (:meth:`ask_stop`); after ``timeout`` it is killed,
        and the spill directories of a killed or dead worker are removed."""
        self.ask_stop()
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        if self.proc.exitcode != 0:
            _remove_spills(self.proc.pid)
        self.conn.close()


_RUNNING = object()
_DEAD = object()


def _poll(s: _Slot) -> Any:
    """The Outcome a worker sent, ``_DEAD`` if it died, else ``_RUNNING``."""
    alive = s.proc.is_alive()  # checked first: a result sent just before exiting still counts
    try:
        if s.conn.poll():
            return s.conn.recv()
    except (EOFError, OSError):
        return _DEAD
    return _RUNNING if alive else _DEAD


class LocalEngine(Engine):
    """A process pool on this machine (no dependency beyond the standard library).

    The worker processes stay alive between calls (idle, waiting on a pipe) so
    later calls skip the start-up; :meth:`close` (or the end of the program)
    stops them.

    Args:
        workers: number of worker processes (default ``os.cpu_count()``).
        max_retries: how often a task is rerun after its worker process died.
    """

    name = "local"

    def __init__(self, workers: Optional[int] = None, *, max_retries: int = 3) -> None:
        self.workers = check_workers(workers) or os.cpu_count() or 1
        self.max_retries = check_retries(max_retries)
        self._idle: List[_Slot] = []  # warm workers kept between runs
        self._idle_hide = True

    def close(self) -> None:
        """Stops the idle worker processes."""
        idle, self._idle = self._idle, []
        for s in idle:
            s.stop()

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        *,
        shared: Any = None,
        ordered: bool = False,
    ) -> Iterator[Tuple[int, Outcome]]:
        if ordered:
            return in_order(self._run(fn, arglist, shared))
        return self._run(fn, arglist, shared)

    def _take_slots(self, want: int, ctx: Any, threads: int, hide: bool) -> List[_Slot]:
        if self._idle_hide != hide:
            self.close()
        slots = [s for s in self._idle if s.proc.is_alive()]
        for s in self._idle:
            if not s.proc.is_alive():
                s.stop(timeout=0)
        self._idle = []
        while len(slots) < want:
            slots.append(_Slot(ctx, threads, hide))
        self._idle_hide = hide
        return slots

    def _run(
        self, fn: TaskFn, arglist: Sequence[Tuple[Any, ...]], shared: Any
    ) -> Iterator[Tuple[int, Outcome]]:
        n = len(arglist)
        if n == 0:
            return
        ctx = multiprocessing.get_context("spawn")
        threads = max(1, (os.cpu_count() or 1) // self.workers)
        queue: Deque[int] = deque(range(n))
        attempts = [0] * n
        slots: List[_Slot] = []
        hide = not (_refers_to_main(fn) or _refers_to_main(shared))
        finished = False
        try:
            slots = self._take_slots(min(self.workers, n), ctx, threads, hide)
            while True:
                for k, s in enumerate(slots):
                    if s.task is None and queue:
                        i = queue.popleft()
                        try:
                            s.conn.send((fn, shared, arglist[i]))
                            s.task = i
                        except (OSError, ValueError):  # died while idle: replace, no attempt lost
                            queue.appendleft(i)
                            s.stop(timeout=0)
                            slots[k] = _Slot(ctx, threads, hide)
                busy = [s for s in slots if s.task is not None]
                if not busy:
                    if not queue:
                        finished = True
                        return
                    continue
                wait([s.conn for s in busy] + [s.proc.sentinel for s in busy])
                for k, s in enumerate(slots):
                    if s.task is None:
                        continue
                    i = s.task
                    result = _poll(s)
                    if result is _RUNNING:
                        continue
                    s.task = None
                    if isinstance(result, Outcome):
                        yield i, result
                        continue
                    # The worker died: replace it, rerun its task on a fresh one.
                    attempts[i] += 1
                    s.stop(timeout=0)
                    slots[k] = _Slot(ctx, threads, hide)
                    if attempts[i] <= self.max_retries:
                        queue.appendleft(i)
                        continue
                    reason = (
                        f"the worker process died {attempts[i]} times running this task"
                        f" (last exit code {s.proc.exitcode}); out of memory or a crash?"
                    )
                    yield i, Outcome(False, error=reason)
        finally:
            if finished:
                self.close()  # another run may have parked workers meanwhile
                self._idle = slots
            else:  # abandoned mid-run (error, interrupt): busy workers are stopped together
                for s in slots:
                    s.ask_stop()
                for s in slots:
                    s.stop()


_local_engines: Dict[Tuple[int, int], LocalEngine] = {}


def shared_local_engine(workers: Optional[int], max_retries: int) -> LocalEngine:
    workers = check_workers(workers)
    key = (workers or os.cpu_count() or 1, check_retries(max_retries))
    eng = _local_engines.get(key)
    if eng is None:
        eng = _local_engines[key] = LocalEngine(workers, max_retries=max_retries)
    return eng


@atexit.register
def _close_local_engines() -> None:
    for eng in list(_local_engines.values()):
        eng.close()

