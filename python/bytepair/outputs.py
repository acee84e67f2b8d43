"""Outputs that are not inputs: every writer refuses to write a file it reads,
or to write two of its outputs to one file, before any work is done.

"The same file" is decided by device and inode when the file exists (a hard
link or another spelling of the path is the same file) and by the resolved
path when it does not yet exist (two outputs that will both be created).

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> corpus = os.path.join(d, "my.txt")
>>> with open(corpus, "w") as f:
...     _ = f.write("text")
>>> check_outputs([("-o", corpus)], [("the input", os.path.join(d, ".", "my.txt"))])
Traceback (most recent call last):
...
bytepair.errors.OutputIsInputError: -o .../my.txt is the input .../my.txt: writing it would destroy it; choose another output
"""

from __future__ import annotations

import os
from typing import Dict, Hashable, Iterable, Iterator, Optional, Sequence, Tuple, Union

from .errors import OutputIsInputError, ReadError
from .shards.paths import file_key, iter_entries

PathLike = Union[str, "os.PathLike[str]"]


def file_identity(path: PathLike) -> Hashable:
    """What tells two paths to one file apart from two files (see
    :func:`bytepair.shards.paths.file_key`)."""
    return file_key(os.fspath(path))


def input_files(paths: Iterable[Tuple[str, Optional[PathLike]]]) -> Iterator[Tuple[str, str, Optional[int]]]:
    """``(label, file, inode)`` for every file the labelled input paths name
    (folders and globs expanded as the readers expand them, one file at a
    time; the inode when the folder listing gave it, else None); a path that
    names nothing readable is left to the reader to report."""
    for label, p in paths:
        if p is None or os.fspath(p) in ("", "-"):
            continue
        try:
            for f, inode in iter_entries(p):
                yield label, f, inode
        except (ReadError, OSError, ValueError):
            yield label, os.fspath(p), None


def check_outputs(outputs: Sequence[Tuple[str, Optional[PathLike]]],
                  inputs: Iterable[Tuple[str, Optional[PathLike]]] = ()) -> None:
    """Raises :class:`~bytepair.errors.OutputIsInputError` when an output is
    one of the inputs or another output. ``outputs`` and ``inputs`` are
    ``(label, path)`` pairs; the label is what the message calls the path
    (the flag the user typed, or "the training data"). A file of an input
    folder whose inode no output has is not looked up (a folder of a million
    files costs its listing)."""
    out_inodes = {key[1] for _, path in outputs if path is not None
                  for key in [file_identity(path)] if isinstance(key, tuple)}
    seen: Dict[Hashable, Tuple[str, str]] = {}
    for label, src, inode in input_files(inputs):
        if inode is None or inode in out_inodes:
            seen.setdefault(file_identity(src), (label, src))
    outs: Dict[Hashable, Tuple[str, PathLike]] = {}
    for label, path in outputs:
        if path is None:
            continue
        key = file_identity(path)
        if key in seen:
            what, first = seen[key]
            raise OutputIsInputError(f"{label} {os.fspath(path)} is {what} {first}: writing it would "
                                     "destroy it; choose another output")
        if key in outs:
            other, opath = outs[key]
            raise OutputIsInputError(f"{label} {os.fspath(path)} and {other} {os.fspath(opath)} are the same file: "
                                     "give each output its own path")
        outs[key] = (label, path)
