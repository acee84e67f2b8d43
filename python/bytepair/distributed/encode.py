"""``encode_dataset``: encode many shards into token files for model training.

One output file per input shard, named after it (``part-0007.jsonl`` ->
``part-0007.bin``), each written through a temporary file and ``os.replace``
so a file is either complete or absent. Every document's ids are exactly
``tokenizer.encode_batch`` of the documents (``disallowed_special=()`` by
default, so special-token text inside a document is plain text), followed by
``eot_token`` when ``append_eot``.

Output formats:

* ``bin``: the ids of all documents back to back, little-endian ``uint16`` when
  ``n_vocab <= 65536`` else ``uint32`` (nanoGPT's ``train.bin``; read with
  ``numpy.memmap(path, dtype=manifest["dtype"])``).
* ``npy``: the same array as a NumPy ``.npy`` file (needs numpy).
* ``parquet``: one row per document, column ``tokens`` (a list of ids of that
  dtype), so document boundaries survive (needs pyarrow).

``manifest.json`` in the output directory records the tokenizer (name,
fingerprint, ``n_vocab``, ``eot_token``), the settings, and per shard: source,
output, documents, tokens and the source's size and modification time (taken
before the shard is read). It is rewritten after every finished shard, so an
interrupted run resumes where it stopped: a shard listed in the manifest whose
output exists (with the expected size for ``bin``) and whose source still has
the recorded size and modification time is skipped; a source edited since,
even to the same size, is encoded again. A directory whose manifest
comes from another tokenizer or other settings is refused.

How the work runs: shards are read, encoded and written by the native
pipeline (:mod:`bytepair.shards.pipeline`: Rust reader, encoder and writer
threads, overlapped, the GIL released, a bounded amount of text in flight).
With ``engine="local"`` every shard goes through one such run on ``workers``
threads of this process (default: one per core); worker processes are used
only when asked for, with an :class:`~bytepair.distributed.LocalEngine`
passed as ``engine``, or when a custom ``reader`` is given (Python code that
may crash runs in workers that can be replaced). On Ray and in worker
processes each task runs the pipeline on its own shard. A shard the native
readers refuse is redone by the Python readers, so the outputs, counts and
error messages are the same whichever way a shard went.
"""

from __future__ import annotations

import array
import contextlib
import os
import sys
import tempfile
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ..errors import ArgumentError, MissingExtraError
from ..outputs import check_outputs
from ..registry import get_encoding, list_encoding_names
from ..shards import pipeline
from ..shards.readers import check_input_format, iter_documents, output_stem, shard_files
from ..tokenizer import Tokenizer
from .driver import PathLike, Progress, Reader
from .engines import Engine, Outcome, get_engine
from .engines.base import check_retries, check_workers, describe_error, task_threads
from .errors import OutputDirError, ShardsFailedError
from .manifest import (
    MANIFEST,
    pending_shards,
    run_settings,
    source_stamp,
    write_manifest,
)

OUTPUT_FORMATS = ("bin", "npy", "parquet")
#: Text encoded per ``encode_batch`` call inside a task (bounds a task's memory).
_BATCH_CHARS = 8 << 20


# ---------------------------------------------------------------- tokenizer identity


def _shippable(tok: Tokenizer) -> Union[str, Tokenizer]:
    """A bundled encoding travels as its name (workers load it offline); any
    other tokenizer travels pickled (its tokens)."""
    if tok.name in list_encoding_names() and get_encoding(tok.name) == tok:
        return tok.name
    return tok


_worker_cache: Dict[str, Tokenizer] = {}


def _worker_tokenizer(spec: Union[str, Tokenizer]) -> Tokenizer:
    if isinstance(spec, Tokenizer):
        return spec
    tok = _worker_cache.get(spec)
    if tok is None:
        tok = _worker_cache[spec] = get_encoding(spec)
    return tok


# ---------------------------------------------------------------- writing one shard


@contextlib.contextmanager
def _atomic_file(path: str) -> Iterator[IO[bytes]]:
    """A binary file written in the same folder and renamed onto ``path`` when
    the block succeeds; on failure nothing appears at ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=".bytepair-", suffix=".tmp", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _batches(docs: Iterator[str]) -> Iterator[List[str]]:
    batch: List[str] = []
    size = 0
    for d in docs:
        if not isinstance(d, str):
            raise TypeError(f"the reader yielded a {type(d).__name__}, not str")
        batch.append(d)
        size += len(d)
        if size >= _BATCH_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _encode_shard(shared: Tuple[Any, ...], path: str, out_path: str) -> Dict[str, int]:
    """Task body (process and Ray engines): encodes one shard into
    ``out_path`` through the native pipeline on this worker's threads, or the
    Python path when the native one refuses the shard; returns its counts."""
    spec, reader, allowed, disallowed = shared[0], shared[3], shared[7], shared[8]
    if reader is None:
        tok = _worker_tokenizer(spec)
        pol = pipeline.policy_lists(tok, allowed, disallowed)
        if pol is not None:
            source = source_stamp(path)
            threads = task_threads() or 1
            got: List[Optional[Dict[str, int]]] = [None]

            def done(i: int, counts: Optional[Dict[str, int]]) -> None:
                got[0] = counts

            _native_shards(tok, pol, [(path, out_path)], shared, threads, done)
            if got[0] is not None:
                return {**got[0], **source}
    return _encode_shard_python(shared, path, out_path)


def _native_shards(
    tok: Tokenizer,
    pol: Tuple[List[str], List[str]],
    jobs: Sequence[Tuple[str, str]],
    shared: Tuple[Any, ...],
    threads: Optional[int],
    on_result: Callable[[int, Optional[Dict[str, int]]], None],
) -> None:
    """Encodes ``jobs`` ``(source, out_path)`` in one native run;
    ``on_result(i, counts)`` as each finishes, with None for a shard the native
    path did not write (the caller redoes it the Python way)."""
    _, text_column, input_format, _, out_format, dtype, append_eot, _, _ = shared

    def done(i: int, documents: int, tokens: int, ids: Any, offsets: Any, error: Optional[str]) -> None:
        if error is None and out_format == "parquet":
            try:
                with _atomic_file(jobs[i][1]) as f:
                    pipeline.write_parquet(f, ids, offsets, dtype)
            except Exception:  # noqa: BLE001 - the Python path redoes it and reports
                error = "parquet output failed"
        on_result(i, None if error is not None else {"documents": documents, "tokens": tokens})

    kind = "memory" if out_format == "parquet" else out_format
    pipeline.run(
        tok,
        [(src, kind, out) for src, out in jobs],
        done,
        text_column=text_column,
        input_format=input_format,
        policy=pol,
        eot=tok.eot_token if append_eot else None,
        uint16=dtype == "uint16",
        num_threads=threads,
    )


def _encode_shard_python(shared: Tuple[Any, ...], path: str, out_path: str) -> Dict[str, int]:
    """The Python path of one shard (custom readers, and shards the native
    path refuses): exact errors naming the path and line / row."""
    (
        spec,
        text_column,
        input_format,
        reader,
        out_format,
        dtype,
        append_eot,
        allowed,
        disallowed,
    ) = shared
    # before reading: a source changed while it is encoded no longer matches
    # what the manifest records, so a resumed run encodes it again
    source = source_stamp(path)
    tok = _worker_tokenizer(spec)
    eot = (
        tok.eot_token if tok.eot_token is not None else -1
    )  # -1: never used (append_eot is checked)
    code = "H" if dtype == "uint16" else "I"
    if array.array(code).itemsize != (2 if code == "H" else 4):  # pragma: no cover - exotic C ABI
        code = "L" if code == "I" else code
    docs = (
        reader(path)
        if reader is not None
        else iter_documents(path, text_column=text_column, input_format=input_format)
    )
    n_docs = 0
    values = array.array(code)
    offsets = [0]

    def encoded() -> Iterator[array.array]:
        nonlocal n_docs
        for batch in _batches(iter(docs)):
            ids = tok.encode_batch(batch, allowed_special=allowed, disallowed_special=disallowed)
            n_docs += len(ids)
            out = array.array(code)
            for one in ids:
                out.extend(one)
                if append_eot:
                    out.append(eot)
                if out_format == "parquet":
                    offsets.append(offsets[-1] + len(one) + (1 if append_eot else 0))
            if sys.byteorder == "big":  # files are little-endian everywhere
                out.byteswap()
            yield out

    if out_format == "bin":
        n_tokens = 0
        with _atomic_file(out_path) as f:
            for chunk in encoded():
                f.write(chunk.tobytes())
                n_tokens += len(chunk)
        return {"documents": n_docs, "tokens": n_tokens, **source}
    for chunk in encoded():
        values.extend(chunk)
    if out_format == "npy":
        import numpy as np

        arr = (
            np.frombuffer(values, dtype="<u2" if dtype == "uint16" else "<u4")
            if len(values)
            else np.zeros(0, dtype="<u2" if dtype == "uint16" else "<u4")
        )
        with _atomic_file(out_path) as f:
            np.save(f, arr, allow_pickle=False)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        kind = pa.uint16() if dtype == "uint16" else pa.uint32()
        flat = pa.array(values, type=kind)
        col = (
            pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), flat)
            if len(offsets) > 1
            else pa.array([], type=pa.list_(kind))
        )
        table = pa.table({"tokens": col})
        with _atomic_file(out_path) as f:
            pq.write_table(table, f)
    return {"documents": n_docs, "tokens": len(values), **source}


def _run_in_threads(
    tok: Tokenizer,
    pol: Tuple[List[str], List[str]],
    args: Sequence[Tuple[str, str]],
    shared: Tuple[Any, ...],
    threads: Optional[int],
    finished: Callable[[int, Outcome], None],
) -> None:
    """The local engine's way: every shard in one native run on ``threads``
    threads of this process (the GIL released), each source stamped before the
    run reads it; a shard the native path refuses is redone the Python way, in
    this process, for today's exact result or error report."""
    stamps: Dict[int, Dict[str, int]] = {}
    jobs: List[int] = []
    for i, (src, _) in enumerate(args):
        try:
            stamps[i] = source_stamp(src)
            jobs.append(i)
        except OSError:
            pass  # the Python path reports it

    def python_path(i: int) -> Outcome:
        try:
            return Outcome(True, _encode_shard_python(shared, *args[i]))
        except Exception as e:  # noqa: BLE001 - any error of a shard is that shard's failure
            return Outcome(False, error=describe_error(e))

    redo = [i for i in range(len(args)) if i not in stamps]

    def done(k: int, counts: Optional[Dict[str, int]]) -> None:
        i = jobs[k]
        if counts is None:
            redo.append(i)  # after the run: the pipeline keeps going meanwhile
        else:
            finished(i, Outcome(True, {**counts, **stamps[i]}))

    if jobs:
        _native_shards(tok, pol, [args[i] for i in jobs], shared, threads, done)
    for i in sorted(redo):
        finished(i, python_path(i))


# ---------------------------------------------------------------- a run's steps


def _checked_tokenizer(tokenizer: Union[Tokenizer, str], format: str, append_eot: bool) -> Tokenizer:
    """The tokenizer of the run, once the output format and ``append_eot``
    are known to work with it (and the format's extra is installed)."""
    if isinstance(tokenizer, str):
        tokenizer = get_encoding(tokenizer)
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(
            "tokenizer must be a bytepair Tokenizer or an encoding name,"
            f" not {type(tokenizer).__name__}"
        )
    if format not in OUTPUT_FORMATS:
        raise ArgumentError(
            f"unknown output format {format!r}; use one of {', '.join(OUTPUT_FORMATS)}", name="format"
        )
    if append_eot and tokenizer.eot_token is None:
        raise ArgumentError(
            f"tokenizer {tokenizer.name!r} has no <|endoftext|> special token;"
            " pass append_eot=False or add the token", name="append_eot"
        )
    if format == "npy":
        try:
            import numpy  # noqa: F401
        except ImportError as e:
            raise MissingExtraError('format="npy" needs numpy: pip install numpy') from e
    if format == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError as e:
            raise MissingExtraError('format="parquet" needs pyarrow: pip install pyarrow') from e
    return tokenizer


def _output_names(shards: Sequence[str], format: str) -> Dict[str, str]:
    """Output file name to shard, in shard order; two shards may not share
    one output, nor may one be written over the manifest."""
    names: Dict[str, str] = {}
    for p in shards:
        name = f"{output_stem(p)}.{format}"
        if name == MANIFEST or name in names:
            other = names.get(name, MANIFEST)
            raise ArgumentError(
                f"{p} and {other} would both be written to {name}; give the shards distinct names", name="paths"
            )
        names[name] = p
    return names


def _output_dir(out_dir: PathLike, names: Dict[str, str], shards: Sequence[str]) -> str:
    """Creates the output directory once no output would land on a shard."""
    out = os.fspath(out_dir)
    # a token file or the manifest written over a shard would destroy it
    check_outputs([("the output", os.path.join(out, n)) for n in [*names, MANIFEST]],
                  [("the shard", p) for p in shards])
    if os.path.exists(out) and not os.path.isdir(out):
        raise OutputDirError(f"{out} is a file, not a directory: the output is a directory of token files "
                             "and manifest.json (give a new or an existing directory)")
    os.makedirs(out, exist_ok=True)
    return out


class _Ledger:
    """A run's shards as they finish: each success goes into the manifest,
    rewritten at once (a stopped run resumes from it), each failure is kept by
    source; the progress line counts both."""

    def __init__(
        self,
        out: str,
        settings: Dict[str, Any],
        names: Dict[str, str],
        entries: Dict[str, Dict[str, Any]],
        todo: List[str],
        manifest: Dict[str, Any],
        progress: Optional[bool],
    ) -> None:
        self.out, self.settings, self.names, self.entries, self.todo = out, settings, names, entries, todo
        self.manifest = manifest
        self.order = list(names)
        self.args = [(names[n], os.path.abspath(os.path.join(out, n))) for n in todo]
        self.failures: Dict[str, str] = {}
        self.bar = Progress(len(self.order), "encoding", progress)
        self.bar.update(len(self.order) - len(todo))

    def finished(self, i: int, res: Outcome) -> None:
        name = self.todo[i]
        src = self.names[name]
        self.bar.update()
        if not res.ok:
            self.failures[src] = res.error
            return
        self.entries[name] = {
            "source": os.path.abspath(src),
            "output": name,
            "documents": res.value["documents"],
            "tokens": res.value["tokens"],
            "source_bytes": res.value["source_bytes"],
            "source_mtime_ns": res.value["source_mtime_ns"],
        }
        self.manifest = write_manifest(self.out, self.settings, self.entries, self.order)

    def result(self) -> Dict[str, Any]:
        """The manifest, or ShardsFailedError listing the failures in shard order."""
        if self.failures:
            sources = [self.names[n] for n in self.order]
            ordered = {s: self.failures[s] for s in sources if s in self.failures}
            raise ShardsFailedError(ordered, self.manifest, what=f"{len(sources)} shards", total=len(sources))
        return self.manifest


def _encode_todo(
    ledger: _Ledger,
    tokenizer: Tokenizer,
    shared: Tuple[Any, ...],
    engine: Union[str, Engine],
    workers: Optional[int],
    address: Optional[str],
    max_retries: int,
) -> None:
    """Encodes the shards ``ledger`` has left, on ``engine``."""
    reader, allowed, disallowed = shared[3], shared[7], shared[8]
    pol = pipeline.policy_lists(tokenizer, allowed, disallowed)
    eng = get_engine(engine, workers=workers, address=address, max_retries=max_retries)
    try:
        if engine == "local" and reader is None and pol is not None:
            # one machine: threads in this process, not worker processes
            _run_in_threads(tokenizer, pol, ledger.args, shared, workers, ledger.finished)
        else:
            for i, res in eng.run(_encode_shard, ledger.args, shared=shared):
                ledger.finished(i, res)
    finally:
        ledger.bar.close()


# ---------------------------------------------------------------- public


def encode_dataset(
    paths: Union[PathLike, Sequence[PathLike]],
    out_dir: PathLike,
    *,
    tokenizer: Union[Tokenizer, str],
    engine: Union[str, Engine] = "local",
    format: str = "bin",
    append_eot: bool = True,
    text_column: str = "text",
    input_format: Optional[str] = None,
    reader: Optional[Reader] = None,
    allowed_special: Union[str, Sequence[str]] = (),
    disallowed_special: Union[str, Sequence[str]] = (),
    workers: Optional[int] = None,
    address: Optional[str] = None,
    max_retries: int = 3,
    progress: Optional[bool] = None,
) -> Dict[str, Any]:
    """Encodes shards into one token file each, in parallel and resumably.

    Args:
        paths: input shards (text, JSONL or Parquet; see
            :mod:`bytepair.shards.readers`). Their names (without
            extension) must differ: each names its output.
        out_dir: output directory (created if missing; on a cluster, storage
            every worker can write).
        tokenizer: a :class:`~bytepair.Tokenizer` or a bundled encoding name.
        engine: ``"local"`` (threads of this process; worker processes when
            ``reader`` is given), ``"ray"``, or an Engine (e.g. a
            :class:`~bytepair.distributed.LocalEngine` for worker processes).
        format: ``"bin"``, ``"npy"`` or ``"parquet"`` (see the module docstring).
        append_eot: add ``tokenizer.eot_token`` after every document.
        text_column: JSONL key / Parquet column with the text.
        input_format: force ``"text"``, ``"jsonl"`` or ``"parquet"``.
        reader: a picklable ``path -> iterable of str`` replacing the built-in readers.
        allowed_special, disallowed_special: passed to ``encode_batch``; the
            default ``()`` / ``()`` encodes special-token text as plain text,
            unlike ``encode``'s default (:mod:`bytepair.special`) on purpose:
            in a corpus such text is data, and a stray ``<|endoftext|>`` must
            neither fail a long job half-way nor end a document (``append_eot``
            marks the boundaries).
        workers, address, max_retries, progress: as in :func:`count_chunks`
            (with ``engine="local"`` and no ``reader``, ``workers`` is the
            number of encoder threads).

    Returns:
        The manifest (also written to ``out_dir/manifest.json``).

    Raises:
        OutputDirError: ``out_dir`` holds a dataset of another tokenizer or
            other settings.
        ShardsFailedError: some shards failed; the others were written and are
            in the manifest, which the error carries as ``.manifest``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("hello world")
    >>> m = encode_dataset([d / "a.txt"], d / "out", tokenizer="gpt2", workers=1)
    >>> m["dtype"], m["tokens"], [s["output"] for s in m["shards"]]
    ('uint16', 3, ['a.bin'])
    >>> list(memoryview((d / "out" / "a.bin").read_bytes()).cast("H"))
    [31373, 995, 50256]
    """
    tokenizer = _checked_tokenizer(tokenizer, format, append_eot)
    check_workers(workers)  # checked before a finished dataset returns early
    check_retries(max_retries)
    shards = shard_files(paths)
    check_input_format(input_format)
    allowed = allowed_special if isinstance(allowed_special, str) else frozenset(allowed_special)
    disallowed = disallowed_special if isinstance(disallowed_special, str) else tuple(disallowed_special)
    names = _output_names(shards, format)
    out = _output_dir(out_dir, names, shards)
    settings = run_settings(tokenizer, format, append_eot, text_column, allowed, disallowed)
    entries, todo = pending_shards(out, settings, names, format)
    manifest = write_manifest(out, settings, entries, list(names))
    if not todo:
        return manifest
    shared = (_shippable(tokenizer), text_column, input_format, reader, format, settings["dtype"],
              append_eot, allowed, disallowed)
    ledger = _Ledger(out, settings, names, entries, todo, manifest, progress)
    _encode_todo(ledger, tokenizer, shared, engine, workers, address, max_retries)
    return ledger.result()
