"""What every engine shares: :class:`Engine` (the contract, see
:mod:`bytepair.distributed.engines`), :class:`Outcome`, and running one task
(:func:`call_task`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple

from ... import _core
from ..errors import BytepairError, EngineError

#: The most reruns of one task an engine accepts.
MAX_RETRIES = 1000

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


def describe_error(e: BaseException) -> str:
    """A task's failure as one message: bytepair's and the usual input errors as
    their text (an OS error as ``path: reason``); only an unexpected kind of
    error is named by its type, to help a bug report."""
    if isinstance(e, BytepairError):
        return str(e)
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename is not None else e.strerror
    if isinstance(e, (ValueError, TypeError, UnicodeError)) and str(e):
        return str(e)
    return f"{type(e).__name__}: {e}"


_task_threads: Optional[int] = None


def task_threads() -> Optional[int]:
    """The core threads the running task may use (set by :func:`call_task`;
    None outside a task: the caller's default, one per core). Task bodies pass
    it to the core explicitly (``num_threads=``): the core's pools never read
    an environment variable.

    >>> call_task(lambda shared: task_threads(), None, (), threads=3).value
    3
    """
    return _task_threads


def call_task(fn: TaskFn, shared: Any, args: Tuple[Any, ...], threads: int = 1) -> Outcome:
    """Runs one task in a worker with ``threads`` core threads (see
    :func:`task_threads`); exceptions become a failed Outcome."""
    global _task_threads
    before, _task_threads = _task_threads, max(1, threads)
    try:
        return Outcome(True, fn(shared, *args))
    except Exception as e:  # noqa: BLE001 - any error of a task is that shard's failure
        return Outcome(False, error=describe_error(e))
    finally:
        _task_threads = before


def check_workers(workers: object) -> int | None:
    """``workers`` when None or an int >= 1, clamped to 4 per core (more
    processes than that only take turns); else an EngineError."""
    if workers is None:
        return None
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise EngineError(f"workers must be a positive int, got {workers!r}", argument="workers")
    return min(workers, _core.MAX_THREADS)


def check_retries(max_retries: object) -> int:
    """``max_retries`` when an int in ``[0, MAX_RETRIES]``; else an EngineError."""
    if not isinstance(max_retries, int) or isinstance(max_retries, bool) or not 0 <= max_retries <= MAX_RETRIES:
        raise EngineError(f"max_retries must be between 0 and {MAX_RETRIES}, got {max_retries!r}", argument="max_retries")
    return max_retries
