"""Driver-side helpers shared by counting and encoding: argument checks, the
progress bar over shards, and the per-task worker setup."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, Optional, Union

PathLike = Union[str, "os.PathLike[str]"]
Reader = Callable[[str], Iterable[str]]


class Progress:
    """A progress bar over shards: tqdm when installed and wanted, else silent.

    ``enabled=None`` shows it when stderr is a terminal.
    """

    def __init__(self, total: int, desc: str, enabled: Optional[bool]) -> None:
        if enabled is None:
            enabled = sys.stderr.isatty()
        self._bar: Any = None
        if enabled:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm is optional
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=total, desc=desc, unit="shard")

    def update(self, n: int = 1, **postfix: Any) -> None:
        if self._bar is not None:
            self._bar.update(n)
            if postfix:
                self._bar.set_postfix(postfix, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
