"""The native shard pipeline: shards read, encoded and written in Rust.

``_core.encode_shards`` reads text and JSONL shards (gzip too) and Parquet
string columns (snappy, gzip or uncompressed) itself; a Parquet file its reader
does not take (another codec, a column pyarrow would not read as a plain string
column, a footer it cannot read) it asks of :func:`parquet_columns`, the
pyarrow loader, before reading any of it, so pyarrow is needed only for those.
It groups the documents into chunks of at least 1 MiB, encodes them on the
persistent encoder threads (their piece caches stay warm across calls) and
writes ``bin`` / ``npy`` files from the flat id buffers (temporary file, fsync,
rename), with reading, encoding and writing overlapped and the GIL released for
the whole run. At most ``4 * threads + 2`` MiB of text is in flight (read but
not written), plus one page and one batch of Parquet values while they are cut
into chunks, whatever the number and size of the shards (a single document
larger than that is admitted alone).

The native readers accept a subset of what the Python readers
(:mod:`bytepair.distributed.readers`) accept, with identical documents; a shard
they refuse (broken JSON, but also ``NaN`` or a lone surrogate escape that
Python's ``json`` takes; a damaged page) is reported as not done, and the callers redo it with
the Python reader, which gives today's result or today's error message.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

from .. import _core
from ..checks import check_threads
from ..special import NO_SPECIALS
from .readers import check_input_format, iter_documents, shard_files, shard_format

if TYPE_CHECKING:  # pragma: no cover
    from ..tokenizer import Tokenizer

Policy = Tuple[List[str], List[str]]
#: Rows of a Parquet shard handed to the pipeline at a time (bounds its memory).
PARQUET_BATCH_ROWS = 8192


def policy_lists(tok: Tokenizer, allowed: Any, disallowed: Any) -> Optional[Policy]:
    """The core's ``(allowed, disallowed)`` special-token lists for
    ``encode_batch(allowed_special=allowed, disallowed_special=disallowed)``, or
    None when the native path cannot match it (a disallowed string that is not
    a special token: the Python path searches every text for it)."""
    if disallowed and not isinstance(disallowed, str) and any(s not in tok.special_tokens for s in disallowed):
        return None
    pol = tok._special_policy(allowed, disallowed)
    if pol.every_disallowed:
        return ([], sorted(tok.special_tokens))
    return (list(pol.allowed), list(pol.disallowed))


def parquet_columns(text_column: str, path: str) -> Iterator[Tuple[bytes, bool, bytes]]:
    """The string column ``text_column`` of a Parquet file as Arrow arrays
    ``(offsets, wide, data)``, one batch of rows at a time; raises on anything
    the Python reader would refuse (the native run then reports the shard as
    not done)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("this Parquet file's codec or layout needs pyarrow: pip install pyarrow") from None

    pf = pq.ParquetFile(path)
    schema = pf.schema_arrow
    if text_column not in schema.names:
        raise ValueError(f"no column {text_column!r} (columns: {', '.join(schema.names)}); pass text_column=")
    kind = schema.field(text_column).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ValueError(f"column {text_column!r} has type {kind}, not string")
    for batch in pf.iter_batches(columns=[text_column], batch_size=PARQUET_BATCH_ROWS):
        arr = batch.column(0)
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        if not len(arr):
            continue
        if arr.null_count:  # a null row is no document
            arr = arr.drop_null()
            if not len(arr):
                continue
        wide = pa.types.is_large_string(arr.type)
        if not (wide or pa.types.is_string(arr.type)):
            raise ValueError(f"unexpected array type {arr.type}")
        _, offsets, data = arr.buffers()
        w = 8 if wide else 4
        offs = offsets.slice(arr.offset * w, (len(arr) + 1) * w).to_pybytes()
        yield offs, wide, data.to_pybytes() if data is not None else b""


def shard_kind(path: str, input_format: Optional[str]) -> Tuple[str, bool]:
    """``(format, gzip)`` of a shard, as the Python readers decide them."""
    fmt = input_format or shard_format(path)
    return fmt, fmt != "parquet" and os.path.basename(path).lower().endswith(".gz")


def run(
    tok: Tokenizer,
    shards: Sequence[Tuple[str, str, Optional[str]]],
    on_done: Callable[..., None],
    *,
    text_column: str = "text",
    input_format: Optional[str] = None,
    policy: Policy = ([], []),
    eot: Optional[int] = None,
    uint16: bool = False,
    num_threads: Optional[int] = None,
) -> Tuple[Any, Any]:
    """Runs ``_core.encode_shards`` over ``shards`` ``(path, output, dest)``
    (output ``"bin"``, ``"npy"``, ``"memory"`` or ``"collect"``);
    ``on_done(index, documents, tokens, ids, offsets, error)`` per shard, in
    input order. Returns the collected ids and offsets (numpy arrays over the core's vectors)."""
    jobs = [(p, *shard_kind(p, input_format), out, dest) for p, out, dest in shards]
    num_threads = check_threads(num_threads)
    return _core.encode_shards(
        tok._core,
        jobs,
        column=text_column,
        eot=eot,
        uint16=uint16,
        num_threads=num_threads,
        allowed_special=policy[0],
        disallowed_special=policy[1],
        loader=functools.partial(parquet_columns, text_column),
        on_done=on_done,
    )


def encode_files(
    tok: Tokenizer,
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    *,
    text_column: str = "text",
    format: Optional[str] = None,
    num_threads: Optional[int] = None,
    allowed_special: Any = NO_SPECIALS,
    disallowed_special: Any = None,
) -> Tuple[Any, Any]:
    """Encodes the documents of whole files: one flat ``numpy.uint32`` array
    of every document's ids, in file order, plus ``n_documents + 1`` ``int64``
    offsets (document ``i`` is ``ids[offsets[i]:offsets[i + 1]]``), exactly what
    :meth:`bytepair.Tokenizer.encode_batch_to_numpy` gives on the documents.

    Files are read as by :func:`bytepair.distributed.encode_dataset`: a text
    file is one document, a JSONL line or a Parquet row is one
    (``text_column``), ``.gz`` text and JSONL are decompressed, ``format``
    (``"text"``, ``"jsonl"`` or ``"parquet"``) overrides the file name.
    Reading, encoding and collecting run in Rust on ``num_threads`` threads
    (``None``: one per core) with the GIL released. Special-token text
    follows ``encode``'s default (:mod:`bytepair.special`): it raises
    :class:`~bytepair.errors.DisallowedSpecialError` unless allowed, or unless
    ``disallowed_special=()`` makes it plain text. A file that cannot be read raises
    :class:`~bytepair.errors.ShardError` naming it and the line or row.
    """
    import numpy as np

    files = shard_files(paths)
    check_input_format(format)
    allowed = allowed_special if isinstance(allowed_special, str) or allowed_special is NO_SPECIALS \
        else frozenset(allowed_special)
    disallowed = disallowed_special if disallowed_special is None or isinstance(disallowed_special, str) \
        else tuple(disallowed_special)
    pol = policy_lists(tok, allowed, disallowed)
    failed: List[int] = []
    if pol is not None:

        def done(i: int, documents: int, tokens: int, ids: Any, offsets: Any, error: Optional[str]) -> None:
            if error is not None:
                failed.append(i)

        ids, offsets = run(
            tok,
            [(p, "collect", None) for p in files],
            done,
            text_column=text_column,
            input_format=format,
            policy=pol,
            num_threads=num_threads,
        )
        if not failed:
            return np.asarray(ids), np.asarray(offsets)
    # a shard the native readers refuse: the Python readers give the exact
    # documents, or the error naming the path and line / row
    docs = [d for p in files for d in iter_documents(p, text_column=text_column, input_format=format)]
    return tok.encode_batch_to_numpy(
        docs, num_threads=num_threads, allowed_special=allowed, disallowed_special=disallowed  # type: ignore[arg-type]
    )


def write_parquet(f: Any, ids: bytes, offsets: bytes, dtype: str) -> None:
    """The Parquet output of one shard (one row per document, column
    ``tokens``) from the flat buffers, exactly as the Python path builds it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kind = pa.uint16() if dtype == "uint16" else pa.uint32()
    width = 2 if dtype == "uint16" else 4
    flat = pa.Array.from_buffers(kind, len(ids) // width, [None, pa.py_buffer(ids)])
    n_offsets = len(offsets) // 8
    if n_offsets > 1:
        offs = pa.Array.from_buffers(pa.int64(), n_offsets, [None, pa.py_buffer(offsets)]).cast(pa.int32())
        col = pa.ListArray.from_arrays(offs, flat)
    else:
        col = pa.array([], type=pa.list_(kind))
    pq.write_table(pa.table({"tokens": col}), f)


__all__: List[str] = ["encode_files", "parquet_columns", "policy_lists", "run", "write_parquet"]
