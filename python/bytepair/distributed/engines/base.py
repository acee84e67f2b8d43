"""What every engine shares: :class:`Engine` (the contract, see
:mod:`bytepair.distributed.engines`), :class:`Outcome`, and running one task
(:func:`call_task`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, Sequence, Tuple

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
    if isinstance(e, BytepairError):
        return str(e)
    return f"{type(e).__name__}: {e}"


def limit_threads(threads: int) -> None:
    # Read by the Rust thread pool when it starts (lazily, at its first use).
    os.environ.setdefault("RAYON_NUM_THREADS", str(max(1, threads)))


def call_task(fn: TaskFn, shared: Any, args: Tuple[Any, ...], threads: int = 1) -> Outcome:
    """Runs one task in a worker; exceptions become a failed Outcome."""
    limit_threads(threads)
    try:
        return Outcome(True, fn(shared, *args))
    except Exception as e:  # noqa: BLE001 - any error of a task is that shard's failure
        return Outcome(False, error=describe_error(e))


def check_workers(workers: object) -> int | None:
    """``workers`` when None or an int >= 1, clamped to 4 per core (more
    processes than that only take turns); else an EngineError."""
    if workers is None:
        return None
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise EngineError(f"workers must be a positive int, got {workers!r}")
    return min(workers, _core.MAX_THREADS)


def check_retries(max_retries: object) -> int:
    """``max_retries`` when an int in ``[0, MAX_RETRIES]``; else an EngineError."""
    if not isinstance(max_retries, int) or isinstance(max_retries, bool) or not 0 <= max_retries <= MAX_RETRIES:
        raise EngineError(f"max_retries must be between 0 and {MAX_RETRIES}, got {max_retries!r}")
    return max_retries
