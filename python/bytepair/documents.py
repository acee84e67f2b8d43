"""Reading training and analysis input: the documents of a ``str``, a path, or an
iterable of texts and paths.

A ``str`` is always one document of text, never a path; an ``os.PathLike``
is read as :func:`bytepair.train` reads it: a UTF-8 text file is one
document, a JSONL or Parquet shard (gzip too) one per line / row (the string
under ``"text"``), a folder or glob every regular file it names (see
:mod:`bytepair.shards.paths`), each file once.

>>> list(iter_documents(["a", "b"]))
['a', 'b']
"""

from __future__ import annotations

import os
from typing import Hashable, Iterable, Iterator, List, Set, Union

from .errors import TrainingError
from .shards.paths import expand, file_key
from .shards.readers import iter_documents as shard_documents
from .shards.readers import shard_format

#: What ``train``, ``extend`` and the inspection tools accept as text.
Data = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]


def read_text_file(path: "os.PathLike[str] | str") -> str:
    """Reads a UTF-8 file; a file that is not UTF-8 raises TrainingError naming it."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TrainingError(f"{os.fspath(path)}: not UTF-8 text (byte {e.start}: {e.reason})") from e


def iter_documents(data: Data) -> Iterator[str]:
    """Yields the documents of ``data`` (see the module docstring) as str.

    >>> list(iter_documents(["a", "b"]))
    ['a', 'b']
    """
    if isinstance(data, (str, os.PathLike)):
        data = [data]
    if isinstance(data, (bytes, bytearray)):
        raise TypeError("training data must be str, not bytes; decode it first")
    seen: Set[Hashable] = set()  # a file named twice is read once, as training reads it
    for item in data:
        if isinstance(item, str):
            yield item
        elif isinstance(item, os.PathLike):
            for path in expand(item):
                key = file_key(path)
                if key not in seen:
                    seen.add(key)
                    yield from _file_documents(path)
        else:
            raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")


def _file_documents(path: str) -> Iterator[str]:
    """One file's documents: a text file is one, a JSONL or Parquet shard one
    per line / row (the string under ``"text"``)."""
    if shard_format(path) == "text" and not path.lower().endswith(".gz"):
        yield read_text_file(path)
    else:
        yield from shard_documents(path)


def read_documents(data: Data) -> List[str]:
    """The documents of ``data`` as a list (see :func:`iter_documents`)."""
    return list(iter_documents(data))
