"""Progress bars for training: bytes counted, then merges learned.

Shown by default only when stderr is a terminal; ``progress=False`` turns them
off and ``progress=True`` forces them on. Uses ``tqdm`` when installed, else
``rich``, else nothing (both are optional and imported lazily).

>>> p = TrainProgress(False)
>>> p.counting()(1024, 0)
>>> p.close()
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Optional

Callback = Callable[[int, int], None]


def enabled(progress: Optional[bool]) -> bool:
    """Whether to show bars: ``None`` means "when stderr is a terminal".

    >>> enabled(False)
    False
    """
    if progress is None:
        try:
            return sys.stderr.isatty()
        except (AttributeError, ValueError):
            return False
    return bool(progress)


class _Bar:
    """A minimal bar interface over tqdm or rich: ``set(n)``, ``close()``."""

    def __init__(self, desc: str, total: Optional[int], unit: str) -> None:
        self._n = 0
        self._impl: Any = None
        self._rich: Any = None
        try:
            from tqdm.auto import tqdm

            scale = unit == "B"
            self._impl = tqdm(total=total, desc=desc, unit=unit, unit_scale=scale, unit_divisor=1024 if scale else 1000,
                              leave=True, file=sys.stderr)
            return
        except ImportError:
            pass
        try:
            from rich.progress import Progress

            self._rich = Progress(transient=False)
            self._rich.start()
            self._impl = self._rich.add_task(desc, total=total)
        except ImportError:
            self._impl = None

    def set(self, n: int) -> None:
        if self._impl is None or n <= self._n:
            return
        if self._rich is not None:
            self._rich.update(self._impl, completed=n)
        else:
            self._impl.update(n - self._n)
        self._n = n

    def finish(self, n: int) -> None:
        """Ends the bar full at ``n``: the real total once the work is done (training
        that stopped early, a total that was unknown or estimated)."""
        if self._impl is None:
            return
        if self._rich is not None:
            self._rich.update(self._impl, total=n, completed=n)
        else:
            self._impl.total = n
            self._impl.n = n
            self._impl.refresh()
        self._n = n

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        elif self._impl is not None:
            self._impl.close()
        self._impl = None


class TrainProgress:
    """Two bars: "counting" (bytes, total when known) then "merging" (merges, with ETA).

    The Rust core calls the callbacks with ``(bytes_done, merges_done)`` of the
    current call about ten times a second.
    """

    def __init__(self, show: bool, total_bytes: Optional[int] = None) -> None:
        self.show = show
        self.total_bytes = total_bytes
        self._bytes_base = 0
        self._count_bar: Optional[_Bar] = None
        self._merge_bar: Optional[_Bar] = None

    def counting(self) -> Callback:
        """A callback for one counting call; call :meth:`counted` after it returns."""
        def cb(done: int, _merges: int) -> None:
            if not self.show:
                return
            if self._count_bar is None:
                self._count_bar = _Bar("counting", self.total_bytes, "B")
            self._count_bar.set(self._bytes_base + done)

        return cb

    def counted(self, nbytes: int) -> None:
        """Records that a counting call finished after ``nbytes`` bytes."""
        self._bytes_base += nbytes
        if self._count_bar is not None:
            self._count_bar.set(self._bytes_base)

    def merging(self, total: int) -> Callback:
        """A callback for the merge loop (``total`` merges at most)."""
        if self._count_bar is not None:
            self._count_bar.finish(self._bytes_base)  # bytes counted: 100 %
            self._count_bar.close()
            self._count_bar = None

        def cb(_bytes: int, done: int) -> None:
            if not self.show:
                return
            if self._merge_bar is None:
                self._merge_bar = _Bar("merging", total, "merge")
            self._merge_bar.set(done)

        return cb

    def merged(self, n: int) -> None:
        """Records that the merge loop made ``n`` merges: the bar ends at 100 %
        even when training stopped before ``total`` (the pairs ran out)."""
        if self._merge_bar is not None:
            self._merge_bar.finish(n)

    def close(self) -> None:
        for bar in (self._count_bar, self._merge_bar):
            if bar is not None:
                bar.close()
        self._count_bar = self._merge_bar = None
