"""Small file helpers shared by the writers: atomic writes."""

from __future__ import annotations

import os
import tempfile
from typing import Union

PathLike = Union[str, "os.PathLike[str]"]


def _default_mode() -> int:
    # mkstemp creates 0600 files; written tokenizer files should get the usual
    # permissions (0666 minus the umask), like open(path, "w") would give.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_MODE = _default_mode()


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: readers see the old file or the new one, never half of one, and
    a failure (disk full, interrupt) leaves any previous file intact."""
    path = os.fspath(path)
    tmp = write_temp(os.path.dirname(os.path.abspath(path)), data)
    try:
        os.replace(tmp, path)
    except BaseException:
        discard(tmp)
        raise


def write_temp(folder: str, data: bytes, prefix: str = ".bytepair-") -> str:
    """Writes ``data`` to a new temporary file in ``folder`` (normal permissions,
    flushed to disk) and returns its path; on failure nothing is left behind.
    The caller moves it into place with ``os.replace`` or removes it."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):  # POSIX only
                os.fchmod(f.fileno(), _MODE)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        discard(tmp)
        raise
    return tmp


def discard(path: str) -> None:
    """Removes a temporary file if it is still there."""
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write_text(path: PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))
