"""Driver-side helpers shared by counting and encoding: argument checks, the
progress line over shards, and the per-task worker setup."""

from __future__ import annotations

import os
from typing import Callable, Iterable, Optional, Union

from ..progress import ProgressLine
from ..progress import enabled as progress_enabled

PathLike = Union[str, "os.PathLike[str]"]
Reader = Callable[[str], Iterable[str]]


class Progress:
    """A progress line over shards on stderr (:class:`bytepair.progress.ProgressLine`:
    shards done, shards/s, the driver's memory, time left).

    ``enabled=None`` shows it when stderr is a terminal.
    """

    def __init__(self, total: int, desc: str, enabled: Optional[bool]) -> None:
        self._line = ProgressLine(desc, total, "shards") if progress_enabled(enabled) else None
        self._n = 0

    def update(self, n: int = 1) -> None:
        self._n += n
        if self._line is not None:
            self._line.update(self._n)

    def close(self) -> None:
        """Writes the final line (where it stands: all shards, or where an error stopped)."""
        if self._line is not None:
            self._line.finish()
            self._line = None
