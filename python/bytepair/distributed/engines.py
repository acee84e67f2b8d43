"""Engines: run one function over many tasks, in worker processes, with retries.

Both engines have the same contract, :meth:`Engine.run`: call
``fn(shared, *args)`` for every ``args`` in a list and yield
``(index, Outcome)`` pairs as tasks finish, or in input order with
``ordered=True`` (callers that depend on order restore it anyway). An exception raised by ``fn`` is a deterministic failure of that
task: it is returned as a failed :class:`Outcome` (never retried, never
stopping the other tasks). A worker process that dies (killed, out of memory,
segfault) is different: its task is retried on a fresh worker, up to
``max_retries`` times.

* ``"local"``: a pool of ``workers`` processes on this machine (default: one per
  CPU), standard library only. Workers are started with ``spawn`` (no fork of a
  process that runs Rust threads) and each runs one task at a time, so the
  driver knows exactly which task a dead worker was running. The workers stay
  up, idle, between calls (``get_engine("local")`` returns one shared engine per
  worker count), so only the first call pays for starting them.
* ``"ray"``: Ray tasks (``pip install bytepair[ray]``). Connects to the cluster
  named by ``address`` (or ``RAY_ADDRESS``), or starts a local one, unless Ray
  is already initialised. ``shared`` is put in the object store once.
  :meth:`RayEngine.tree_reduce` also folds the results with Ray tasks, so the
  driver receives only the final value.

Each task limits the Rust thread pool to one thread per task slot
(``RAYON_NUM_THREADS``, unless set), since the engine already keeps every CPU
busy with one task each.

>>> eng = get_engine("local", workers=1)
>>> sorted((i, o.value) for i, o in eng.run(divmod, [(7,), (9,)], shared=100))
[(0, (14, 2)), (1, (11, 1))]
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import multiprocessing
import os
import sys
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .errors import EngineError, EngineUnavailableError

TaskFn = Callable[..., Any]


@dataclass
class Outcome:
    """The result of one task: ``ok`` and ``value``, or not ``ok`` and ``error``
    (a one-line reason)."""

    ok: bool
    value: Any = None
    error: str = ""


class Engine:
    """Base class; see the module docstring."""

    name = "engine"

    def run(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        *,
        shared: Any = None,
        ordered: bool = False,
    ) -> Iterator[Tuple[int, Outcome]]:  # pragma: no cover - interface
        """Runs ``fn(shared, *args)`` for each ``args``; yields ``(index, Outcome)``
        as tasks finish, or in input order when ``ordered``."""
        raise NotImplementedError


def in_order(results: Iterator[Tuple[int, Outcome]]) -> Iterator[Tuple[int, Outcome]]:
    """Re-yields ``(index, outcome)`` pairs in index order, holding back the ones
    that arrive early.

    >>> [i for i, _ in in_order(iter([(2, None), (0, None), (1, None)]))]
    [0, 1, 2]
    """
    early: Dict[int, Outcome] = {}
    nxt = 0
    for i, out in results:
        early[i] = out
        while nxt in early:
            yield nxt, early.pop(nxt)
            nxt += 1


def _describe(e: BaseException) -> str:
    from ..errors import BytepairError

    if isinstance(e, BytepairError):
        return str(e)
    return f"{type(e).__name__}: {e}"


def _limit_threads(threads: int) -> None:
    # Read by the Rust thread pool when it starts (lazily, at its first use).
    os.environ.setdefault("RAYON_NUM_THREADS", str(max(1, threads)))


def call_task(fn: TaskFn, shared: Any, args: Tuple[Any, ...], threads: int = 1) -> Outcome:
    """Runs one task in a worker; exceptions become a failed Outcome."""
    _limit_threads(threads)
    try:
        return Outcome(True, fn(shared, *args))
    except Exception as e:  # noqa: BLE001 - any error of a task is that shard's failure
        return Outcome(False, error=_describe(e))


# ---------------------------------------------------------------- local engine


def _local_worker(conn: Any, threads: int) -> None:  # the body of one worker process
    _limit_threads(threads)
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
        except BaseException as e:  # noqa: BLE001 - report, never kill the worker silently
            out = Outcome(False, error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
        try:
            conn.send(out)
        except Exception as e:  # noqa: BLE001 - the result does not pickle
            conn.send(
                Outcome(False, error=f"the task's result cannot be sent back ({_describe(e)})")
            )


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
        self.proc = ctx.Process(target=_local_worker, args=(child, threads), daemon=True)
        with _main_hidden(hide_main):
            self.proc.start()
        child.close()
        self.task: Optional[int] = None

    def stop(self, timeout: float = 5.0) -> None:
        try:
            self.conn.send(None)
        except (OSError, ValueError):
            pass
        self.proc.join(timeout)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
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
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise EngineError(f"workers must be a positive int, got {workers!r}")
        self.workers = workers or os.cpu_count() or 1
        self.max_retries = max_retries
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
            else:  # abandoned mid-run (error, interrupt): busy workers are killed
                for s in slots:
                    s.stop(timeout=0 if s.task is not None else 5.0)


_local_engines: Dict[Tuple[int, int], LocalEngine] = {}


def _shared_local_engine(workers: Optional[int], max_retries: int) -> LocalEngine:
    key = (workers or os.cpu_count() or 1, max_retries)
    eng = _local_engines.get(key)
    if eng is None:
        eng = _local_engines[key] = LocalEngine(workers, max_retries=max_retries)
    return eng


@atexit.register
def _close_local_engines() -> None:
    for eng in list(_local_engines.values()):
        eng.close()


# ---------------------------------------------------------------- Ray engine


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
        ray = import_ray()
        if not ray.is_initialized():
            init_kwargs.setdefault("include_dashboard", False)
            init_kwargs.setdefault("log_to_driver", True)
            ray.init(address=address, **init_kwargs)
        self.ray = ray
        self.max_retries = max_retries

    def run(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        *,
        shared: Any = None,
        ordered: bool = False,
    ) -> Iterator[Tuple[int, Outcome]]:
        """As :meth:`Engine.run`. With ``ordered``, results that finish early stay
        in Ray's object store (spilling to disk if needed) until their turn, so
        the driver holds one result at a time."""
        ray = self.ray
        if not arglist:
            return
        task = ray.remote(call_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=False
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
                        done, pending = ray.wait(pending, num_returns=1)
                        finished.update(index[r] for r in done)
                        continue
                    i = nxt
                    nxt += 1
                else:
                    done, pending = ray.wait(pending, num_returns=1)
                    i = index[done[0]]
                    nxt += 1
                yield i, self._fetch(refs[i])
                refs[i] = None  # let Ray free the result
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def tree_reduce(
        self,
        fn: TaskFn,
        arglist: Sequence[Tuple[Any, ...]],
        combine: Callable[..., Any],
        *,
        shared: Any = None,
        fan_in: int = 8,
        on_done: Optional[Callable[[], None]] = None,
    ) -> Tuple[Any, Dict[int, str]]:
        """Maps ``fn(shared, *args)`` over ``arglist`` and folds the results with
        ``combine(*values)`` in a tree of Ray tasks, ``fan_in`` adjacent values per
        task, keeping input order (so ``combine`` need only be associative).

        Returns ``(value, {})``, or ``(None, failures)`` when some map tasks
        failed (index -> reason); every map task is waited for first, and only
        its small status travels to the driver. The tree's results stay in the
        object store; the driver receives the final value only.
        """
        ray = self.ray
        if fan_in < 2:
            raise EngineError(f"fan_in must be at least 2, got {fan_in}")
        leaf = ray.remote(_leaf_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=False, num_returns=2
        )
        join = ray.remote(_join_task).options(num_cpus=1, max_retries=self.max_retries)
        shared_ref = ray.put(shared)
        pairs = [leaf.remote(fn, shared_ref, tuple(args)) for args in arglist]
        index = {st: i for i, (st, _) in enumerate(pairs)}
        pending = [st for st, _ in pairs]
        failures: Dict[int, str] = {}
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    out = self._fetch(ref)
                    if not out.ok:
                        failures[index[ref]] = out.error
                    if on_done is not None:
                        on_done()
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
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
        try:
            return ray.get(level[0]), {}
        except ray.exceptions.RayError as e:  # a merge task failed for good
            raise EngineError(f"merging the results on Ray failed: {type(e).__name__}: {e}") from e

    def _fetch(self, ref: Any) -> Outcome:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as e:
            text = str(e).strip()
            reason = text.splitlines()[0] if text else type(e).__name__
            return Outcome(False, error=f"{type(e).__name__}: {reason}")


def _leaf_task(fn: TaskFn, shared: Any, args: Tuple[Any, ...]) -> Tuple[Any, Any]:
    """A map task of :meth:`RayEngine.tree_reduce`: ``(Outcome, value)``, the
    Outcome (small, fetched by the driver) without the value (left in Ray)."""
    out = call_task(fn, shared, args, 1)
    if not out.ok:
        return out, None
    return Outcome(True), out.value


def _join_task(combine: Callable[..., Any], *values: Any) -> Any:
    _limit_threads(1)
    return combine(*values)


def get_engine(
    engine: Union[str, Engine] = "local",
    *,
    workers: Optional[int] = None,
    address: Optional[str] = None,
    max_retries: int = 3,
    **ray_init: Any,
) -> Engine:
    """An engine from its name (``"local"`` or ``"ray"``), or ``engine`` itself.

    >>> get_engine("local", workers=2).workers
    2
    >>> get_engine("spark")
    Traceback (most recent call last):
    ...
    bytepair.distributed.errors.EngineError: unknown engine 'spark'; use "local" or "ray"
    """
    if isinstance(engine, Engine):
        return engine
    if engine == "local":
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise EngineError(f"workers must be a positive int, got {workers!r}")
        return _shared_local_engine(workers, max_retries)
    if engine == "ray":
        if workers is not None:
            ray_init.setdefault("num_cpus", workers)
        return RayEngine(address, max_retries=max_retries, **ray_init)
    raise EngineError(f'unknown engine {engine!r}; use "local" or "ray"')
