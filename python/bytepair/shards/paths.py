"""Training shards: which files a path names and how each is read.

A path given to :func:`bytepair.train` (or ``bytepair train``) is

* a **file**: read by its name: ``.parquet`` / ``.pq`` (one row is one
  document, the string in ``text_column``), ``.jsonl`` / ``.ndjson`` (one JSON
  object per line, the string under ``text_field``), anything else plain UTF-8
  text (the whole file is one document); ``.gz`` after a text or JSONL name
  means gzip-compressed;
* a **directory**: every regular file under it (recursively, names starting
  with ``.`` skipped; pipes, sockets and devices skipped), in sorted path order;
* a **glob** (``*``, ``?``, ``[`` in a path that does not exist as such):
  the matching regular files in sorted order (``**`` matches folders
  recursively).

Several paths are read in the order given, each file once: a file that two
paths name (a folder and a glob inside it, a hard link) is read where it
first appears. A named path that is a pipe or a device is refused (``-``
reads stdin).

The shards are read by the Rust core's dataset readers (no pyarrow needed
for Parquet with the plain, snappy or gzip codecs; pyarrow reads the
others); a null in a Parquet text column is no document and is skipped. A shard that cannot be
read raises :class:`~bytepair.errors.ReadError` naming it.

>>> shard_kind("web/part-0001.parquet"), shard_kind("a.jsonl.gz"), shard_kind("book.txt")
(('parquet', False), ('jsonl', True), ('text', False))
"""

from __future__ import annotations

import glob
import os
from typing import Hashable, Iterable, Iterator, List, Optional, Set, Tuple, Union

from .. import _core
from ..errors import ReadError

PathLike = Union[str, "os.PathLike[str]"]

_KINDS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


def shard_kind(path: PathLike) -> Tuple[str, bool]:
    """``(format, gzip)`` of a file from its name: format ``"text"``,
    ``"jsonl"`` or ``"parquet"``."""
    name = os.path.basename(os.fspath(path))
    gz = name.lower().endswith(".gz")
    if gz:
        name = name[:-3]
    kind = _KINDS.get(os.path.splitext(name)[1].lower(), "text")
    if kind == "parquet" and gz:
        kind = "text"  # a gzip-compressed Parquet file is not a Parquet file
    return kind, gz


def _error(path: str, reason: str) -> ReadError:
    e = ReadError(f"{path}: {reason}")
    e.path = path  # type: ignore[attr-defined]
    return e


def _regular(path: str) -> bool:
    """A regular file (or a link to one): never a FIFO, socket or device,
    which a reader could wait on forever."""
    return os.path.isfile(path)


def _walk(top: str) -> Iterator[Tuple[str, int]]:
    """``(path, inode)`` of every regular file under the folder ``top``, in
    the order ``sorted()`` of the full paths gives: one folder's entries are
    sorted by name, a folder's name followed by ``/`` (its files' paths
    continue it), and each folder is listed where it sorts, when it is
    reached (one folder's listing is held at a time). The type comes from
    the folder listing (a link is followed; folders reached through links
    are not entered, as ``os.walk`` does not); no file is opened or looked
    up one by one. The inode is the listing's (that of the file a link names
    for a link). A folder that cannot be listed is skipped, as ``os.walk``
    skips it. The core walks (``bytepair._core.FolderWalk``: the counter
    reads the files it finds without handing each back)."""
    return _core.FolderWalk(top)


def empty_folder_error(top: str) -> ReadError:
    """The error of a folder that holds no file to read."""
    return _error(top, "the folder holds no files to read (names starting with . are skipped)")


def iter_entries(path: PathLike) -> Iterator[Tuple[str, Optional[int]]]:
    """The files a path names, as :func:`expand` gives them, one at a time
    (a folder of a million files is never listed whole), each with its
    inode when the folder listing gave it (None for a named file or a glob
    match: look it up). A folder without files raises ReadError once it is
    walked."""
    p = os.fspath(path)
    if not os.path.isdir(p):
        yield from ((f, None) for f in _expand_named(p))
        return
    found = False
    for entry in _walk(p):
        found = True
        yield entry
    if not found:
        raise empty_folder_error(p)


def expand_entries(path: PathLike) -> List[Tuple[str, Optional[int]]]:
    """:func:`expand` with each file's inode (see :func:`iter_entries`)."""
    return list(iter_entries(path))


def expand(path: PathLike) -> List[str]:
    """The files a path names (see the module docstring), in order. A
    directory without files or a glob without matches raises ReadError, as
    does a named path that is not a regular file. Folders and globs take
    regular files only: a FIFO or socket among them is skipped."""
    return [f for f, _ in iter_entries(path)]


def _expand_named(p: str) -> List[str]:
    """The files of a path that is not a folder: a glob's matches or the file itself."""
    if not os.path.exists(p) and glob.has_magic(p):
        hits = sorted(glob.glob(p, recursive=True))
        matches = [m for m in hits if _regular(m)]
        if not matches:
            folders = [m for m in hits if os.path.isdir(m)]
            if folders:
                shown = ", ".join(folders[:3]) + (" ..." if len(folders) > 3 else "")
                raise _error(p, f"this pattern matches only folders ({shown}), no file; give the folder itself "
                                "to read every file under it, or a pattern ending in a file name")
            raise _error(p, "no file matches this pattern")
        return matches
    if os.path.exists(p) and not _regular(p):
        raise _error(p, "not a regular file (a pipe, socket or device); give a file, or '-' for stdin")
    return [p]


def expand_all(paths: Iterable[PathLike]) -> List[str]:
    """The files of every path, in order, each file once: a file named again
    (by a folder and a glob, a hard link, another spelling) is read where it
    first appears.

    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> with open(os.path.join(d, "a.txt"), "w") as f:
    ...     _ = f.write("x")
    >>> [os.path.basename(f) for f in expand_all([d, os.path.join(d, "*.txt"), os.path.join(d, ".", "a.txt")])]
    ['a.txt']
    """
    seen: Set[Hashable] = set()
    out: List[str] = []
    for path in paths:
        for f in expand(path):
            key = file_key(f)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def file_key(path: str) -> Hashable:
    """``(device, inode)`` of an existing file, else its resolved path: equal
    for two names of one file."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return os.path.normcase(os.path.realpath(path))
    return (st.st_dev, st.st_ino)
