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
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bytepair-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):  # POSIX only
                os.fchmod(f.fileno(), _MODE)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))
