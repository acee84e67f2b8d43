"""Reading training and analysis input: the documents of a ``str``, a path, or an
iterable of texts and paths, and :class:`Inputs`, the options that say how
:func:`bytepair.train`, :func:`bytepair.extend`, :func:`bytepair.shrink` and
:func:`bytepair.counts.count_chunks` read it.

A ``str`` is always one document of text, never a path; an ``os.PathLike``
is read as :func:`bytepair.train` reads it: a UTF-8 text file is one
document, a JSONL or Parquet shard (gzip too) one per line / row, a folder or
glob every regular file it names (see :mod:`bytepair.shards.paths`), each
file once.

>>> list(iter_documents(["a", "b"]))
['a', 'b']
>>> list(iter_documents(["a||b", "c"], Inputs(documents="||")))
['a', 'b', 'c']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from typing import Any, Hashable, Iterable, Iterator, List, Mapping, Optional, Set, Union

from . import memory as _memory
from .errors import TrainingError
from .shards.paths import expand, file_key, shard_kind
from .shards.readers import iter_documents as shard_documents

#: What ``train``, ``extend`` and the inspection tools accept as text.
Data = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Inputs:
    """How the data of ``train``, ``extend``, ``shrink`` and ``count_chunks`` is read.

    The data itself (texts, files, directories, globs) is each function's
    ``data`` argument; these options say how to read it, the same way for
    each. Every field can also be given to those functions as a keyword
    argument of the same name (``train(data, 1000, text_column="body")``).

    Attributes:
        text_column: the string column of Parquet shards.
        text_field: the key of the text in JSONL shards.
        documents: a separator (e.g. ``"\\n\\n"``): each document is further
            split at it and the separator dropped, so with ``pattern=None``
            each such document is its own chunk.
        cache_dir: a folder where each file's chunk counts are saved as soon
            as it is counted (keyed by its content hash and everything that
            changes its counts) and reused, so a run stopped by Ctrl-C while
            counting resumes where it stopped. Counting only (not ``shrink``).
        memory_limit: a size (``"2GB"``, ``"512MiB"``) or bytes bounding the
            run's data (``train`` and ``extend``: default half the machine's
            memory). Counting spills to disk past its share, with identical
            results; see :mod:`bytepair.memory`. Counting only (not ``shrink``).

    >>> Inputs(text_column="body").text_column
    'body'
    >>> Inputs(documents="")
    Traceback (most recent call last):
      ...
    bytepair.errors.TrainingError: documents must be a non-empty separator str or None, got ''
    """

    text_column: str = "text"
    text_field: str = "text"
    documents: Optional[str] = None
    cache_dir: Optional[PathLike] = None
    memory_limit: Union[int, str, None] = None

    def __post_init__(self) -> None:
        for name in ("text_column", "text_field"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise TrainingError(f"{name} must be a non-empty str, got {value!r}", argument=name)
        if self.documents is not None and (not isinstance(self.documents, str) or not self.documents):
            raise TrainingError(f"documents must be a non-empty separator str or None, got {self.documents!r}",
                                argument="documents")
        if self.cache_dir is not None and not isinstance(self.cache_dir, (str, os.PathLike)):
            raise TrainingError(f"cache_dir must be a folder path or None, got {self.cache_dir!r}",
                                argument="cache_dir")
        if self.memory_limit is not None:
            _memory.parse_size(self.memory_limit)

    @classmethod
    def of(cls, inputs: Optional["Inputs"], options: Mapping[str, Any], func: str) -> "Inputs":
        """``inputs`` (default: ``Inputs()``) with the fields given in
        ``options`` as keywords of ``func``; any other keyword is a TypeError,
        as Python raises for an unknown argument."""
        names = {f.name for f in fields(cls)}
        unknown = [k for k in options if k not in names]
        if unknown:
            raise TypeError(f"{func}() got an unexpected keyword argument {unknown[0]!r}")
        if inputs is not None and not isinstance(inputs, Inputs):
            raise TypeError(f"inputs must be a bytepair.Inputs, got {type(inputs).__name__}")
        base = inputs if inputs is not None else cls()
        return replace(base, **options) if options else base

    def limit(self) -> Optional[int]:
        """``memory_limit`` in bytes, or None when not set."""
        return None if self.memory_limit is None else _memory.parse_size(self.memory_limit)

    def column_of(self, kind: str) -> str:
        """The column (Parquet) or field (JSONL) holding the text of a shard of ``kind``."""
        return self.text_column if kind == "parquet" else self.text_field


def read_text_file(path: "os.PathLike[str] | str") -> str:
    """Reads a UTF-8 file; a file that is not UTF-8 raises TrainingError naming it."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TrainingError(f"{os.fspath(path)}: not UTF-8 text (byte {e.start}: {e.reason})") from e


def iter_documents(data: Data, inputs: Optional[Inputs] = None) -> Iterator[str]:
    """Yields the documents of ``data`` (see the module docstring) as str.

    A path is read as a training path is (text, JSONL or Parquet shards,
    directories, globs; each file once; ``inputs.text_column`` /
    ``inputs.text_field``, default ``"text"``), and each document is split at
    ``inputs.documents`` when set.

    >>> list(iter_documents(["a", "b"]))
    ['a', 'b']
    """
    if isinstance(data, (bytes, bytearray)):
        raise TypeError("training data must be str, not bytes; decode it first")
    items: Iterable[Any] = [data] if isinstance(data, (str, os.PathLike)) else data
    seen: Set[Hashable] = set()  # the files read so far: a file named twice is read once
    for item in items:
        if isinstance(item, str):
            docs: Iterable[str] = [item]
        elif isinstance(item, os.PathLike):
            docs = _path_documents(item, inputs or Inputs(), seen)
        else:
            raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")
        for doc in docs:
            if inputs is None or inputs.documents is None:
                yield doc
            else:
                yield from doc.split(inputs.documents)


def _path_documents(path: "os.PathLike[str]", inputs: Inputs, seen: Set[Hashable]) -> Iterator[str]:
    """The documents of the files a training path names that are not in
    ``seen`` (added as read), each read by its kind."""
    for name in expand(path):
        if file_key(name) in seen:
            continue
        seen.add(file_key(name))
        kind, gz = shard_kind(name)
        if kind == "text" and not gz:
            yield read_text_file(name)
        else:
            yield from shard_documents(name, text_column=inputs.column_of(kind), input_format=kind)


def read_documents(data: Data) -> List[str]:
    """The documents of ``data`` as a list (see :func:`iter_documents`)."""
    return list(iter_documents(data))
