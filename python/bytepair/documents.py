"""Reading training and analysis input: the documents of a ``str``, a path, or an
iterable of texts and paths.

A ``str`` is always one document of text, never a path; an ``os.PathLike``
names a UTF-8 text file that is one document.

>>> list(iter_documents(["a", "b"]))
['a', 'b']
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator, List, Union

from .errors import TrainingError

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
    if isinstance(data, str):
        yield data
        return
    if isinstance(data, os.PathLike):
        yield read_text_file(data)
        return
    if isinstance(data, (bytes, bytearray)):
        raise TypeError("training data must be str, not bytes; decode it first")
    for item in data:
        if isinstance(item, str):
            yield item
        elif isinstance(item, os.PathLike):
            yield read_text_file(item)
        else:
            raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")


def read_documents(data: Data) -> List[str]:
    """The documents of ``data`` as a list (see :func:`iter_documents`)."""
    return list(iter_documents(data))
