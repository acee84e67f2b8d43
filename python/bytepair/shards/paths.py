"""Training shards: which files a path names and how each is read.

A path given to :func:`bytepair.train` (or ``bytepair train``) is

* a **file**: read by its name: ``.parquet`` / ``.pq`` (one row is one
  document, the string in ``text_column``), ``.jsonl`` / ``.ndjson`` (one JSON
  object per line, the string under ``text_field``), anything else plain UTF-8
  text (the whole file is one document); ``.gz`` after a text or JSONL name
  means gzip-compressed;
* a **directory**: every file under it (recursively, names starting with
  ``.`` skipped), in sorted path order;
* a **glob** (``*``, ``?``, ``[`` in a path that does not exist as such):
  the matching files in sorted order (``**`` matches folders recursively).

The shards are read by the Rust core's dataset readers (no pyarrow needed
for Parquet with the plain, snappy or gzip codecs); a shard that cannot be
read raises :class:`~bytepair.errors.ReadError` naming it.

>>> shard_kind("web/part-0001.parquet"), shard_kind("a.jsonl.gz"), shard_kind("book.txt")
(('parquet', False), ('jsonl', True), ('text', False))
"""

from __future__ import annotations

import glob
import os
from typing import List, Tuple, Union

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


def expand(path: PathLike) -> List[str]:
    """The files a path names (see the module docstring), in order. A
    directory without files or a glob without matches raises ReadError."""
    p = os.fspath(path)
    if os.path.isdir(p):
        found: List[str] = []
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [os.path.join(root, f) for f in files if not f.startswith(".")]
        if not found:
            raise _error(p, "the directory holds no files to train on")
        return sorted(found)
    if not os.path.exists(p) and glob.has_magic(p):
        matches = sorted(m for m in glob.glob(p, recursive=True) if os.path.isfile(m))
        if not matches:
            raise _error(p, "no file matches this pattern")
        return matches
    return [p]
