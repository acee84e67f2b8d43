"""The ``"ray"`` engine: Ray tasks, one CPU each (``pip install bytepair[ray]``)."""

from __future__ import annotations

import os
import secrets
import signal
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ..errors import EngineError, EngineUnavailableError
from . import reaper
from .base import Engine, Outcome, TaskFn, call_task, check_retries

#: Seconds that tasks abandoned by the driver (an error, Ctrl-C, SIGTERM) get
#: to unwind, removing their temporary files, before Ray kills their workers.
CANCEL_GRACE = 10.0
#: Seconds of one wait on Ray before the driver looks at signals again.
WAIT_STEP = 0.25

_reaper_pipes: List[int] = []  # write ends of the reapers' stdin, open for the life of the program


def import_ray() -> Any:
    """Imports Ray, or raises EngineUnavailableError saying how to install it."""
    try:
        import ray
    except ImportError as e:
        raise EngineUnavailableError(
            'the "ray" engine needs Ray, which is not installed: pip install "bytepair[ray]"'
            ' (or use engine="local")'
        ) from e
    return ray


class RayEngine(Engine):
    """Ray tasks, one CPU each.

    Args:
        address: a cluster address (``"auto"``, ``"ray://host:10001"``, ...);
            None uses ``RAY_ADDRESS`` or starts a local Ray. Ignored when Ray is
            already initialised in this process.
        max_retries: how often Ray reruns a task whose worker process died.
        init_kwargs: more arguments for ``ray.init`` (e.g. ``num_cpus=2``).
    """

    name = "ray"

    def __init__(
        self, address: Optional[str] = None, *, max_retries: int = 3, **init_kwargs: Any
    ) -> None:
        max_retries = check_retries(max_retries)
        ray = import_ray()
        if not ray.is_initialized():
            init_kwargs.setdefault("include_dashboard", False)
            init_kwargs.setdefault("log_to_driver", True)
            _init(ray, address, init_kwargs)
        self.ray = ray
        self.max_retries = max_retries

    def run(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        *,
        shared: Any = None,
        ordered: bool = False,
        memory: Optional[int] = None,
    ) -> Iterator[Tuple[int, Outcome]]:
        """As :meth:`Engine.run`. With ``ordered``, results that finish early stay
        in Ray's object store (spilling to disk if needed) until their turn, so
        the driver holds one result at a time. ``memory``: bytes reserved per
        task as Ray's ``memory`` resource, so a node runs no more tasks at once
        than its memory holds."""
        ray = self.ray
        if not arglist:
            return
        task = ray.remote(call_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=False, **self._reserve(memory)
        )
        shared_ref = ray.put(shared)
        refs = [task.remote(fn, shared_ref, tuple(args), 1) for args in arglist]
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        finished: set = set()
        nxt = 0
        try:
            while nxt < len(refs):
                if ordered:
                    if nxt not in finished:
                        done, pending = self._wait(pending)
                        finished.update(index[r] for r in done)
                        continue
                    i = nxt
                    nxt += 1
                else:
                    done, pending = self._wait(pending)
                    i = index[done[0]]
                    nxt += 1
                yield i, self._fetch(refs[i])
                refs[i] = None  # let Ray free the result
        finally:
            self._abandon(pending)

    def tree_reduce(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        combine: Callable[..., Any],
        *,
        shared: Any = None,
        fan_in: int = 8,
        on_done: Optional[Callable[[], None]] = None,
        memory: Optional[int] = None,
    ) -> Tuple[Any, Dict[int, str]]:
        """Maps ``fn(shared, *args)`` over ``arglist`` and folds the results with
        ``combine(*values)`` in a tree of Ray tasks, ``fan_in`` adjacent values per
        task, keeping input order (so ``combine`` need only be associative).

        Returns ``(value, {})``, or ``(None, failures)`` when some map tasks
        failed (index -> reason); every map task is waited for first, and only
        its small status travels to the driver. The tree's results stay in the
        object store; the driver receives the final value only. ``memory``: as
        in :meth:`run`, for the map tasks.
        """
        ray = self.ray
        if fan_in < 2:
            raise EngineError(f"fan_in must be at least 2, got {fan_in}")
        leaf = ray.remote(_leaf_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=False, num_returns=2,
            **self._reserve(memory),
        )
        join = ray.remote(_join_task).options(num_cpus=1, max_retries=self.max_retries)
        shared_ref = ray.put(shared)
        pairs = [leaf.remote(fn, shared_ref, tuple(args)) for args in arglist]
        index = {st: i for i, (st, _) in enumerate(pairs)}
        pending = [st for st, _ in pairs]
        failures: Dict[int, str] = {}
        try:
            while pending:
                done, pending = self._wait(pending)
                for ref in done:
                    out = self._fetch(ref)
                    if not out.ok:
                        failures[index[ref]] = out.error
                    if on_done is not None:
                        on_done()
        finally:
            self._abandon(pending)
        if failures:
            return None, failures
        level = [value for _, value in pairs]
        while len(level) > 1:
            level = [
                join.remote(combine, *level[k : k + fan_in])
                if len(level[k : k + fan_in]) > 1
                else level[k]
                for k in range(0, len(level), fan_in)
            ]
        self._wait(level[:1])
        try:
            return ray.get(level[0]), {}
        except ray.exceptions.RayError as e:  # a merge task failed for good
            raise EngineError(f"merging the results on Ray failed: {type(e).__name__}: {e}") from e

    def _abandon(self, pending: List[Any]) -> None:
        """Stops the tasks the driver no longer waits for (an error, Ctrl-C,
        SIGTERM): first by raising KeyboardInterrupt in each, so it unwinds and
        removes its temporary files (spill directories, half-written outputs);
        only tasks still running after :data:`CANCEL_GRACE` seconds are killed."""
        if not pending:
            return
        ray = self.ray
        for ref in pending:
            ray.cancel(ref, force=False)
        _, left = self._wait(pending, len(pending), timeout=CANCEL_GRACE, signals=False)
        for ref in left:
            ray.cancel(ref, force=True)

    def _wait(
        self, refs: List[Any], num_returns: int = 1, *, timeout: Optional[float] = None, signals: bool = True
    ) -> Tuple[List[Any], List[Any]]:
        """``ray.wait(refs, num_returns, timeout)``, with the program's SIGTERM
        handler run in Python between short waits, never inside one: an
        exception that a handler raises inside Ray's wait (the CLI's exit
        status 143) comes out of it as ``SystemExit(1)``. ``signals=False``
        holds SIGTERM back until the wait ends (while abandoned tasks unwind)."""
        ray = self.ray
        main = threading.current_thread() is threading.main_thread()
        handler = signal.getsignal(signal.SIGTERM) if main else None
        if not callable(handler):  # the default action, ignored, or not the main thread: nothing raises
            return ray.wait(refs, num_returns=num_returns, timeout=timeout)
        got: List[int] = []
        signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                step = WAIT_STEP if deadline is None else max(0.0, min(WAIT_STEP, deadline - time.monotonic()))
                done, rest = ray.wait(refs, num_returns=num_returns, timeout=step)
                finished = len(done) >= num_returns or (deadline is not None and time.monotonic() >= deadline)
                if finished or (got and signals):
                    break
        finally:
            signal.signal(signal.SIGTERM, handler)
        if got:
            handler(got[0], None)
        return done, rest

    def _reserve(self, memory: Optional[int]) -> Dict[str, int]:
        """Ray task options reserving ``memory`` bytes per task (none for None);
        an EngineError when no live node offers that much (the tasks would
        wait for such a node for ever)."""
        if memory is None:
            return {}
        largest = max((n["Resources"].get("memory", 0) for n in self.ray.nodes() if n.get("Alive")), default=0)
        if memory > largest:
            raise EngineError(
                f"each task would reserve {memory / 1e6:,.0f} MB, more than any Ray node offers"
                f" (the largest: {largest / 1e6:,.0f} MB): lower memory_limit"
            )
        return {"memory": memory}

    def _fetch(self, ref: Any) -> Outcome:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as e:
            text = str(e).strip()
            reason = text.splitlines()[0] if text else type(e).__name__
            return Outcome(False, error=f"{type(e).__name__}: {reason}")


def _init(ray: Any, address: Optional[str], init_kwargs: Dict[str, Any]) -> None:
    """``ray.init``, keeping the program's SIGTERM handler (Ray installs its
    own, which exits with status 15 and a fatal-signal dump), and marking the
    processes of a local Ray this starts with a token a reaper process
    (:mod:`.reaper`) stops them by when this program ends, however it ends."""
    main = threading.current_thread() is threading.main_thread()
    on_term = signal.getsignal(signal.SIGTERM) if main else None
    token = _start_reaper()
    if token is not None:
        os.environ[reaper.OWNER_ENV] = token
    try:
        ray.init(address=address, **init_kwargs)
    finally:
        if token is not None:
            del os.environ[reaper.OWNER_ENV]
        if on_term is not None:
            signal.signal(signal.SIGTERM, on_term)


def _start_reaper() -> Optional[str]:
    """Starts a :mod:`.reaper` process that waits for this one to end (its
    standard input is a pipe only this process writes to); returns its token
    (None where there is no ``/proc`` to find processes in)."""
    if not os.path.isdir("/proc/self") or not hasattr(os, "posix_spawn"):
        return None
    token = f"{os.getpid()}-{secrets.token_hex(8)}"
    env = {k: v for k, v in os.environ.items() if k != reaper.OWNER_ENV}
    read, write = os.pipe()  # not inheritable: Ray's processes never hold the write end
    try:
        os.posix_spawn(sys.executable, [sys.executable, "-S", "-I", reaper.__file__, token], env, setsid=True,
                       file_actions=[(os.POSIX_SPAWN_DUP2, read, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError:
        os.close(write)
        return None
    finally:
        os.close(read)
    _reaper_pipes.append(write)  # open until this process ends
    return token


def _leaf_task(fn: TaskFn, shared: Any, args: Tuple[Any, ...]) -> Tuple[Any, Any]:
    """A map task of :meth:`RayEngine.tree_reduce`: ``(Outcome, value)``, the
    Outcome (small, fetched by the driver) without the value (left in Ray)."""
    out = call_task(fn, shared, args, 1)
    if not out.ok:
        return out, None
    return Outcome(True), out.value


def _join_task(combine: Callable[..., Any], *values: Any) -> Any:
    return combine(*values)

