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

Each task runs with a fixed number of core threads, which task bodies pass to
the core explicitly (:func:`~bytepair.distributed.engines.base.task_threads`):
the local engine gives each of its ``workers`` processes ``cpus // workers``
threads, Ray one thread per task (each task asks Ray for one CPU), since the
engine already keeps every CPU busy with one task each.

>>> eng = get_engine("local", workers=1)
>>> sorted((i, o.value) for i, o in eng.run(divmod, [(7,), (9,)], shared=100))
[(0, (14, 2)), (1, (11, 1))]
"""

from __future__ import annotations

from typing import Any, Optional, Union

from ..errors import EngineError
from .base import Engine, Outcome, TaskFn, call_task, check_workers, in_order, task_threads
from .local import LocalEngine, shared_local_engine
from .ray import RayEngine, import_ray

__all__ = ["Engine", "LocalEngine", "Outcome", "RayEngine", "TaskFn", "call_task", "get_engine", "import_ray", "in_order", "task_threads"]


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
    workers = check_workers(workers)
    if engine == "local":
        return shared_local_engine(workers, max_retries)
    if engine == "ray":
        if workers is not None:
            ray_init.setdefault("num_cpus", workers)
        return RayEngine(address, max_retries=max_retries, **ray_init)
    raise EngineError(f'unknown engine {engine!r}; use "local" or "ray"')

