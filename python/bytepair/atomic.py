"""Small file helpers shared by the writers: atomic writes and private temporary folders."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from typing import Iterator, Union

PathLike = Union[str, "os.PathLike[str]"]


def _default_mode() -> int:
    # mkstemp creates 0600 files; written tokenizer files should get the usual
    # permissions (0666 minus the umask), like open(path, "w") would give.
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


_MODE = _default_mode()


def check_output_path(path: PathLike, *, folder: bool = False) -> str:
    """Checks, before any work is done, that ``path`` can be written: not an
    existing folder (unless ``folder``: then not an existing file), in a folder
    that exists and is writable. Raises an ``OSError`` naming ``path`` (never a
    temporary file); returns ``path`` as a str.

    >>> check_output_path("/nonexistent-dir/x.json")
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] No such file or directory (its folder /nonexistent-dir does not exist): '/nonexistent-dir/x.json'
    """
    p = os.fspath(path)
    if not p:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory (empty output path)", p)
    if folder:
        if os.path.exists(p) and not os.path.isdir(p):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory (a file of that name exists)", p)
    elif os.path.isdir(p):
        raise IsADirectoryError(errno.EISDIR, "Is a directory (give a file name)", p)
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise FileNotFoundError(errno.ENOENT, f"No such file or directory (its folder {parent} does not exist)", p)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, f"Permission denied (cannot create files in {parent})", p)
    return p


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Writes ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``: readers see the old file or the new one, never half of one, and
    a failure (disk full, interrupt) leaves any previous file intact. Errors name
    ``path``, not the temporary file."""
    path = check_output_path(path)
    try:
        tmp = write_temp(os.path.dirname(os.path.abspath(path)), data)
    except OSError as e:
        if e.filename == path or e.errno is None:
            raise
        raise type(e)(e.errno, e.strerror, path) from e
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


@contextlib.contextmanager
def temporary_directory(prefix: str) -> Iterator[str]:
    """A new private folder under the temporary directory the user set
    (``TMPDIR``, ``TEMP`` or ``TMP``, else the system's), removed with its
    contents when the block ends, by success, an error or an interrupt. A set
    variable naming no folder is an error (``FileNotFoundError`` naming it),
    never a silent fall-back to another place nor a folder created for it."""
    for var in ("TMPDIR", "TEMP", "TMP"):
        parent = os.environ.get(var)
        if parent:
            if not os.path.isdir(parent):
                raise FileNotFoundError(errno.ENOENT, f"No such directory (the temporary directory; set {var} "
                                        "to one that exists)", parent)
            break
    else:
        parent = tempfile.gettempdir()
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
