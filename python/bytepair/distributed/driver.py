"""Driver-side helpers shared by counting and encoding: argument checks, the
progress bar over shards, and the per-task worker setup."""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, List, Optional, Sequence, Union

from .readers import INPUT_FORMATS

PathLike = Union[str, "os.PathLike[str]"]
Reader = Callable[[str], Iterable[str]]


def normalize_paths(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """A list of path strings; a single path is a list of one.

    >>> normalize_paths("a.txt"), normalize_paths(["a", "b"])
    (['a.txt'], ['a', 'b'])
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if isinstance(paths, (bytes, bytearray)):
        raise TypeError("paths must be str or os.PathLike, not bytes")
    out = []
    for p in paths:
        if not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"shard paths must be str or os.PathLike, got {type(p).__name__}")
        out.append(os.fspath(p))
    if not out:
        raise ValueError("no input shards given")
    return out


def check_input_format(input_format: Optional[str]) -> None:
    if input_format is not None and input_format not in INPUT_FORMATS:
        raise ValueError(
            f"unknown input_format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}"
            " or None (from the file name)"
        )


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
