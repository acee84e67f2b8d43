"""The ``"ray"`` engine: Ray tasks, one CPU each (``pip install bytepair[ray]``)."""

from __future__ import annotations

import _thread
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
#: to unwind, removing their temporary files, before the driver stops waiting
#: for them (see :meth:`RayEngine._abandon`).
CANCEL_GRACE = 10.0
#: Seconds of one wait on Ray before the driver looks at signals again.
WAIT_STEP = 0.25
#: Seconds between two looks of a running task at its run's stop flag.
STOP_POLL = 0.2
#: The namespace of the stop flags in Ray's key-value store (kept in the GCS).
STOP_NAMESPACE = "bytepair"

_reaper_pipes: List[int] = []  # write ends of the reapers' stdin, open for the life of the program
_started_here: Optional[str] = None  # the GCS address of the local Ray this process started (its reaper stops it)


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
        task = ray.remote(_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=False, **self._reserve(memory)
        )
        shared_ref = ray.put(shared)
        stop = _stop_key()
        refs = [task.remote(stop, fn, shared_ref, tuple(args)) for args in arglist]
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
            self._abandon(pending, stop)

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
        stop = _stop_key()
        pairs = [leaf.remote(stop, fn, shared_ref, tuple(args)) for args in arglist]
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
            self._abandon(pending, stop)
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

    def _abandon(self, pending: List[Any], stop: str) -> None:
        """Stops the tasks the driver no longer waits for (an error, Ctrl-C,
        SIGTERM) by setting their run's stop flag ``stop`` in Ray's key-value
        store: each task watches it (:class:`_StopWatch`) and raises
        KeyboardInterrupt in itself, so it unwinds and removes its temporary
        files (spill directories, half-written outputs); a task that starts
        later stops at once. The driver waits up to :data:`CANCEL_GRACE`
        seconds for them to end.

        Tasks still running then (they do not check for interrupts) are left
        to end on their own, at the latest with the cluster, when this program
        started it (``ray.shutdown`` at exit, then the reaper); on any other
        cluster they are force-cancelled. ``ray.cancel`` is the last resort
        because Ray's task submitter can abort the driver when a cancel meets
        a task that is just finishing."""
        if not pending:
            return
        ray = self.ray
        flagged = _set_flag(stop, True)
        try:
            _, left = self._wait(pending, len(pending), timeout=CANCEL_GRACE if flagged else 0, signals=False)
        finally:
            if flagged:
                _set_flag(stop, False)
        if _started_here is None or _started_here != _gcs_address(ray):
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
    global _started_here
    main = threading.current_thread() is threading.main_thread()
    on_term = signal.getsignal(signal.SIGTERM) if main else None
    token = _start_reaper()
    if token is not None:
        os.environ[reaper.OWNER_ENV] = token
    try:
        ray.init(address=address, **init_kwargs)
        # the cluster's processes carry the token only when this init started them
        _started_here = _gcs_address(ray) if token is not None and reaper.owned(token) else None
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


def _gcs_address(ray: Any) -> Optional[str]:
    """The address of the cluster this process is connected to (None if unknown)."""
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - not connected, or a Ray without the attribute
        return None


def _stop_key() -> str:
    """A stop flag's key, unique to one run (several drivers may share a cluster)."""
    return f"stop-{os.getpid()}-{secrets.token_hex(8)}"


def _set_flag(key: str, on: bool) -> bool:
    """Sets (or removes) the stop flag ``key`` in Ray's key-value store;
    False when the store cannot be reached."""
    from ray.experimental import internal_kv

    try:
        if on:
            internal_kv._internal_kv_put(key, b"1", namespace=STOP_NAMESPACE)
        else:
            internal_kv._internal_kv_del(key, namespace=STOP_NAMESPACE)
    except Exception:  # noqa: BLE001 - the cluster is gone, or unreachable
        return False
    return True


class _StopWatch:
    """Watches the run's stop flag from a thread while a task runs on the Ray
    worker's main thread, and interrupts the task (KeyboardInterrupt, as
    Ctrl-C would: the core checks for it in its loops) when the driver sets
    it. The lock makes "interrupt" and :meth:`close` exclusive: no interrupt
    starts once the task has finished."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.fired = False
        self.lock = threading.Lock()
        self.done = threading.Event()
        threading.Thread(target=self._watch, name="bytepair-stop-watch", daemon=True).start()

    def _watch(self) -> None:
        from ray.experimental import internal_kv

        while True:
            try:
                stop = internal_kv._internal_kv_exists(self.key, namespace=STOP_NAMESPACE)
            except Exception:  # noqa: BLE001 - the store is unreachable for now: look again
                stop = False
            if stop:
                with self.lock:
                    if not self.done.is_set():
                        self.fired = True
                        _thread.interrupt_main()
                return
            if self.done.wait(STOP_POLL):
                return

    def close(self) -> None:
        with self.lock:
            self.done.set()


def _delivered() -> None:
    """A Python call: an interrupt raised just before :meth:`_StopWatch.close`
    took its lock reaches the main thread here, inside the task's handler."""


def _task(stop: str, fn: TaskFn, shared: Any, args: Tuple[Any, ...]) -> Outcome:
    """A task of :meth:`RayEngine.run`: :func:`call_task` on one core thread,
    ended early by the run's stop flag (see :class:`_StopWatch`): the task
    unwinds and returns a failed Outcome, which the driver that set the flag
    ignores."""
    if threading.current_thread() is not threading.main_thread():  # interrupts reach the main thread only
        return call_task(fn, shared, args, 1)
    watch = _StopWatch(stop)
    try:
        try:
            out = call_task(fn, shared, args, 1)
        finally:
            watch.close()
        _delivered()
    except KeyboardInterrupt:
        if not watch.fired:
            raise
        return Outcome(False, error="stopped: the driver abandoned the run")
    return out


def _leaf_task(stop: str, fn: TaskFn, shared: Any, args: Tuple[Any, ...]) -> Tuple[Any, Any]:
    """A map task of :meth:`RayEngine.tree_reduce`: ``(Outcome, value)``, the
    Outcome (small, fetched by the driver) without the value (left in Ray)."""
    out = _task(stop, fn, shared, args)
    if not out.ok:
        return out, None
    return Outcome(True), out.value


def _join_task(combine: Callable[..., Any], *values: Any) -> Any:
    return combine(*values)
