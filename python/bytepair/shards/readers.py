"""Shard readers: the documents of one input file, in file order.

Three formats, chosen from the file name (or forced with ``input_format=``):

* **text** (any other name): the whole file is one document, as in
  :func:`bytepair.train` given paths. Newlines are part of the text, never
  document boundaries.
* **jsonl** (``.jsonl``, ``.ndjson``): one JSON object per line, the document is
  the string in ``text_column``. Blank lines are skipped.
* **parquet** (``.parquet``, ``.pq``): one row is one document, the string in
  ``text_column`` (pyarrow is imported only for these files); a null is no
  document and is skipped.

Text and JSONL files may be gzip-compressed (``.gz`` after the name). Any
problem raises :class:`~bytepair.distributed.errors.ShardError` starting with
the path (and the line or row when known), so a bad shard is reported by name.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp(), "a.jsonl")
>>> _ = p.write_text('{"text": "one\\\\ntwo"}\\n\\n{"text": "three"}\\n')
>>> list(iter_documents(p))
['one\\ntwo', 'three']
>>> shard_format(p), output_stem(p)
('jsonl', 'a')
"""

from __future__ import annotations

import gzip
import json
import os
from typing import IO, Iterator, List, Optional, Sequence, Union, cast

from ..errors import ArgumentError, ShardError, json_error_text
from .paths import expand_all

PathLike = Union[str, "os.PathLike[str]"]

INPUT_FORMATS = ("text", "jsonl", "parquet")
_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".pq": "parquet"}


def _split_gz(path: PathLike) -> tuple[str, bool]:
    name = os.path.basename(os.fspath(path))
    if name.lower().endswith(".gz"):
        return name[:-3], True
    return name, False


def _json_kind(v: object) -> str:
    """A JSON value's kind as JSON names it, with its article.

    >>> _json_kind(5), _json_kind([1]), _json_kind(None), _json_kind(True)
    ('a number', 'an array', 'null', 'a boolean')
    """
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return "a string"


def shard_format(path: PathLike) -> str:
    """The input format implied by a file name: ``"text"``, ``"jsonl"`` or ``"parquet"``.

    >>> shard_format("x/part-0001.parquet"), shard_format("a.jsonl.gz"), shard_format("b.txt")
    ('parquet', 'jsonl', 'text')
    """
    name, _ = _split_gz(path)
    return _SUFFIXES.get(os.path.splitext(name)[1].lower(), "text")


def output_stem(path: PathLike) -> str:
    """The name an output shard takes from its input: the file name without
    ``.gz`` and without its last extension.

    >>> output_stem("/data/web/part-00017.jsonl.gz"), output_stem("book.txt"), output_stem("README")
    ('part-00017', 'book', 'README')
    """
    name, _ = _split_gz(path)
    stem, _ = os.path.splitext(name)
    return stem or name


def iter_documents(
    path: PathLike, *, text_column: str = "text", input_format: Optional[str] = None
) -> Iterator[str]:
    """Yields the documents of one shard (see the module docstring).

    Args:
        path: the shard.
        text_column: the JSONL key / Parquet column holding the text.
        input_format: ``"text"``, ``"jsonl"``, ``"parquet"``, or None to decide
            from the file name.

    Raises:
        ShardError: the file is not UTF-8, a line is not a JSON object with a
            string ``text_column``, the Parquet file is damaged or lacks the
            column.
        OSError: the file cannot be opened.
    """
    fmt = input_format or shard_format(path)
    if fmt == "text":
        yield _read_text(path)
    elif fmt == "jsonl":
        yield from _iter_jsonl(path, text_column)
    elif fmt == "parquet":
        yield from _iter_parquet(path, text_column)
    else:
        raise ArgumentError(f"unknown input format {fmt!r}; use one of {', '.join(INPUT_FORMATS)}", name="input_format")


def _open_binary(path: PathLike) -> IO[bytes]:
    if _split_gz(path)[1]:
        return cast(IO[bytes], gzip.open(path, "rb"))
    return open(path, "rb")


def _read_text(path: PathLike) -> str:
    try:
        with _open_binary(path) as f:
            raw = f.read()
    except (gzip.BadGzipFile, EOFError) as e:
        raise ShardError(path, f"damaged gzip file ({e})") from e
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ShardError(
            path,
            f"not UTF-8 text (byte {e.start}: {e.reason}); convert it to UTF-8 or drop the shard",
        ) from e


def _iter_jsonl(path: PathLike, text_column: str) -> Iterator[str]:
    lineno = 0
    try:
        with _open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise ShardError(
                        f"{os.fspath(path)}:{lineno}", f"not UTF-8 (byte {e.start} of the line)"
                    ) from e
                if lineno == 1 and line.startswith("\ufeff"):  # a byte-order mark is not JSON
                    line = line[1:]
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ShardError(
                        f"{os.fspath(path)}:{lineno}", f"invalid JSON: {json_error_text(e, line=False)}"
                    ) from e
                if not isinstance(obj, dict):
                    raise ShardError(
                        f"{os.fspath(path)}:{lineno}",
                        f"expected a JSON object, got {_json_kind(obj)}",
                    )
                if text_column not in obj:
                    keys = ", ".join(map(repr, list(obj)[:8])) or "none"
                    raise ShardError(
                        f"{os.fspath(path)}:{lineno}",
                        f"no {text_column!r} key (keys: {keys}); pass text_column=",
                    )
                text = obj[text_column]
                if not isinstance(text, str):
                    raise ShardError(
                        f"{os.fspath(path)}:{lineno}",
                        f"{text_column!r} is {_json_kind(text)}, not a string",
                    )
                yield text
    except (gzip.BadGzipFile, EOFError) as e:
        raise ShardError(path, f"damaged gzip file after line {lineno} ({e})") from e


def _iter_parquet(path: PathLike, text_column: str) -> Iterator[str]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ShardError(path, "reading Parquet needs pyarrow: pip install pyarrow") from e
    try:
        pf = pq.ParquetFile(os.fspath(path))
    except (pa.ArrowException, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ShardError(path, f"not a valid Parquet file ({e})") from e
    names = pf.schema_arrow.names
    if text_column not in names:
        raise ShardError(
            path, f"no column {text_column!r} (columns: {', '.join(names)}); pass text_column="
        )
    kind = pf.schema_arrow.field(text_column).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ShardError(path, f"column {text_column!r} has type {kind}, not string")
    row = 0
    try:
        for batch in pf.iter_batches(columns=[text_column], batch_size=8192):
            for text in batch.column(0).to_pylist():
                row += 1
                if text is not None:  # a null row is no document
                    yield text
    except pa.ArrowException as e:
        raise ShardError(path, f"damaged Parquet data near row {row} ({e})") from e


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
        raise ArgumentError("no input shards given", name="paths")
    return out


def shard_files(paths: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """The shard files that paths name, each once, as training reads them:
    folders and globs expanded to their regular files, a file named twice
    read where it first appears (see :mod:`bytepair.shards.paths`).

    >>> shard_files("a.txt")
    ['a.txt']
    """
    return expand_all(normalize_paths(paths))


def check_input_format(input_format: Optional[str]) -> None:
    if input_format is not None and input_format not in INPUT_FORMATS:
        raise ArgumentError(
            f"unknown input_format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}"
            " or None (from the file name)", name="input_format"
        )
