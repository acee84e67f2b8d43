"""``ChunkCounts``: the table of distinct pre-token chunks and their frequencies.

Training only needs this table, so counting can happen anywhere (many processes,
a cluster) and be merged. The table keeps chunks in **first-seen order**, which
the tie-break rule depends on. Merging the tables of consecutive shards in shard
order gives exactly the first-seen order of the concatenated corpus (a chunk
first appears in the earliest shard that holds it), so distributed counting is
exact.

The table lives in the Rust core (``bytepair._core.ChunkTable``: one arena of
chunk bytes plus an index), and counting runs there in parallel with the GIL
released.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pathlib
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Hashable, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from . import _core
from . import memory as _memory
from . import patterns as _patterns
from .atomic import atomic_write_bytes
from .checks import check_threads, fix_surrogates, validate_specials
from .documents import Data, Inputs
from .errors import CorruptCountsError, FormatError, ReadError, TrainingError
from .shards.paths import empty_folder_error, expand, file_key, iter_entries, shard_kind
from .shards.pipeline import parquet_columns

PathLike = Union[str, "os.PathLike[str]"]

#: Characters of str documents gathered before one parallel counting call.
BATCH_CHARS = 8 << 20
#: Plain text files handed to the core in one call (read there in parallel,
#: many small files per task, and counted together: see ``src/train/files.rs``).
FILES_PER_CALL = 1 << 16
#: The endings of every file name that is not plain text (see
#: :func:`~bytepair.shards.paths.shard_kind`): a name without one is plain text.
_NOT_PLAIN = (".gz", ".jsonl", ".ndjson", ".parquet", ".pq")
#: Files whose sizes :func:`input_size` adds up at least, past twice as many, to estimate.
SIZE_SAMPLE = 4096


class ChunkCounts:
    """An ordered ``bytes -> count`` table plus the pattern it was counted with.

    >>> c = ChunkCounts.from_texts(["a b a"], pattern="gpt2")
    >>> list(c.items())
    [(b'a', 1), (b' b', 1), (b' a', 1)]
    >>> c.update(ChunkCounts({b" c": 2, b"a": 1}, pattern="gpt2")).as_dict()
    {b'a': 2, b' b': 1, b' a': 1, b' c': 2}
    """

    def __init__(self, counts: Optional[Dict[bytes, int]] = None, *, pattern: Optional[str] = "o200k",
                 special_tokens: Sequence[str] = ()) -> None:
        self.pattern = _patterns.resolve(pattern)
        self.special_tokens = list(special_tokens)
        self._table = _core.ChunkTable()
        if counts:
            items = []
            for k, n in counts.items():
                if not isinstance(k, (bytes, bytearray)):
                    raise TypeError(f"chunk keys must be bytes, got {type(k).__name__}")
                if not isinstance(n, int) or isinstance(n, bool) or n < 0 or n >= 1 << 63:
                    raise TrainingError(f"the count of chunk {bytes(k)!r} must be an int in [0, 2**63), got {n!r}")
                items.append((bytes(k), n))
            self._table.add_items(items)

    @classmethod
    def from_table(cls, table: "_core.ChunkTable", pattern: Optional[str], special_tokens: Sequence[str]) -> "ChunkCounts":
        """Wraps a table counted by the core (``bytepair._core.ChunkTable``)."""
        out = cls(pattern=pattern, special_tokens=special_tokens)
        out._table = table
        return out

    @property
    def table(self) -> "_core.ChunkTable":
        """The core's table behind these counts (what the trainer reads)."""
        return self._table

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, pattern: Optional[str] = "o200k",
                   special_tokens: Sequence[str] = (), num_threads: Optional[int] = None) -> "ChunkCounts":
        """Counts the chunks of some documents (str) with the Rust core.

        >>> ChunkCounts.from_texts(["ab ab"], pattern="gpt2").as_dict()
        {b'ab': 1, b' ab': 1}
        """
        if isinstance(texts, str):
            texts = [texts]
        return count_chunks(texts, pattern=pattern, special_tokens=special_tokens, num_threads=num_threads)

    @classmethod
    def from_files(cls, paths: Iterable[PathLike], *, pattern: Optional[str] = "o200k",
                   special_tokens: Sequence[str] = (), num_threads: Optional[int] = None,
                   documents: Optional[str] = None) -> "ChunkCounts":
        """Counts UTF-8 files (each one document, read in blocks, never whole)."""
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        return count_chunks([p if isinstance(p, os.PathLike) else _as_path(p) for p in paths],
                     pattern=pattern, special_tokens=special_tokens, num_threads=num_threads, documents=documents)

    def update(self, other: "ChunkCounts") -> "ChunkCounts":
        """Adds ``other``'s counts in place; new chunks go after existing ones, in
        ``other``'s order. Patterns must agree."""
        if other.pattern != self.pattern:
            raise TrainingError("cannot merge chunk counts made with different patterns")
        if other is self:
            self._table.update(self._table.copy())
        else:
            self._table.update(other._table)
        return self

    def items(self) -> Iterator[Tuple[bytes, int]]:
        """``(chunk, count)`` in first-seen order."""
        return iter(self._table.items())

    def as_dict(self) -> Dict[bytes, int]:
        """The table as an ordered dict."""
        return dict(self._table.items())

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, chunk: bytes) -> int:
        return self._table.count_of(bytes(chunk))

    def total(self) -> int:
        """Number of chunk occurrences counted."""
        return self._table.total()

    # ------------------------------------------------------------ files

    def save(self, path: PathLike) -> None:
        """Writes the table atomically in bytepair's chunk-count format (``.bpc``):

        a JSON header line ``{"format": "bytepair-chunk-counts", "version": 1,
        "pattern": ..., "special_tokens": [...], "entries": N}`` then, per chunk in
        first-seen order, a LEB128 byte length, the bytes, and a LEB128 count.
        """
        atomic_write_bytes(path, self.to_bytes())

    def to_bytes(self) -> bytes:
        """The ``.bpc`` file content (see :meth:`save`)."""
        header = {
            "format": _FORMAT, "version": _VERSION, "pattern": self.pattern,
            "special_tokens": self.special_tokens, "entries": len(self._table),
        }
        return json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n" + self._table.to_body()

    @classmethod
    def load(cls, path: PathLike) -> "ChunkCounts":
        """Reads a file written by :meth:`save`; a damaged file raises FormatError."""
        with open(path, "rb") as f:
            raw = f.read()
        return cls.from_bytes(raw, path=path)

    @classmethod
    def from_bytes(cls, raw: bytes, *, path: object = None) -> "ChunkCounts":
        """Parses ``.bpc`` content (see :meth:`save`)."""
        nl = raw.find(b"\n")
        try:
            header = json.loads(raw[:nl].decode("utf-8")) if nl >= 0 else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            header = None
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise FormatError("not a bytepair chunk-count file", path=path)
        if header.get("version") != _VERSION:
            raise FormatError(f"unknown chunk-count file version {header.get('version')!r}", path=path)
        entries = header.get("entries")
        pattern = header.get("pattern")
        specials = header.get("special_tokens", [])
        if not isinstance(entries, int) or entries < 0 or not (pattern is None or isinstance(pattern, str)) \
                or not isinstance(specials, list) or not all(isinstance(s, str) for s in specials):
            raise FormatError("chunk-count file header is damaged", path=path)
        try:
            table = _core.ChunkTable.from_body(raw[nl + 1:], entries)
        except CorruptCountsError as e:
            raise FormatError(str(e), path=path) from None
        return cls.from_table(table, pattern, specials)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkCounts):
            return NotImplemented
        return self.pattern == other.pattern and self._table == other._table

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (ChunkCounts.from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        return f"<ChunkCounts {len(self):,} distinct chunks, {self.total():,} total>"


_FORMAT = "bytepair-chunk-counts"
_VERSION = 1


# ---------------------------------------------------------------- counting input


def _as_path(p: str) -> "os.PathLike[str]":
    return pathlib.Path(p)


def _threads(num_threads: Optional[int]) -> Optional[int]:
    """A positive thread count or None, clamped to 4 per core (see :func:`check_threads`)."""
    return check_threads(num_threads, error=TrainingError)


def utf8_len(text: str) -> int:
    """The length of ``text`` in UTF-8 bytes (what the core counts), lone surrogates
    as the 3 bytes of the U+FFFD that replaces them.

    >>> utf8_len("a한")
    4
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def input_size(data: object) -> Optional[int]:
    """Bytes to count when known up front (a str or paths), for the progress
    line: the sizes of the files (each once), or past ``2 * SIZE_SAMPLE``
    files an estimate from ``SIZE_SAMPLE`` to twice that many of them,
    evenly spaced (a folder of a million files is listed, not looked up
    file by file, nor held)."""
    if isinstance(data, str):
        return utf8_len(data)
    if isinstance(data, os.PathLike):
        data = [data]
    if isinstance(data, (list, tuple)) and all(isinstance(x, os.PathLike) for x in data):
        try:
            return _files_size(data)
        except (OSError, TrainingError):
            return None
    return None


def _files_size(paths: Sequence[PathLike]) -> int:
    n, stride, sample = 0, 1, []  # sample: the files at multiples of stride
    for p in paths:
        for f, _ in iter_entries(p):
            if n % stride == 0:
                sample.append(f)
                if len(sample) > 2 * SIZE_SAMPLE:
                    sample, stride = sample[::2], stride * 2
            n += 1
    if stride == 1:  # every file: the exact size, each file once
        return sum(os.path.getsize(f) for f in {file_key(f): f for f in sample}.values())
    return round(sum(os.path.getsize(f) for f in sample) * n / len(sample))


@dataclass(frozen=True)
class _Setup:
    """Everything that makes a counter and names a cached table: one counting run's settings."""

    pattern: Optional[str]
    special_tokens: List[str]
    inputs: Inputs
    threads: Optional[int]
    core_options: Dict[str, Any]
    progress: Any

    def counter(self) -> "_core.ChunkCounter":
        return _core.ChunkCounter(self.pattern, self.special_tokens, self.inputs.documents, self.threads,
                                  **self.core_options)

    def finish(self, counter: "_core.ChunkCounter") -> ChunkCounts:
        return ChunkCounts.from_table(counter.finish(), self.pattern, self.special_tokens)

    def callback(self) -> Any:
        return self.progress.counting() if self.progress is not None else None


def count_chunks(
    data: Data,
    *,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    num_threads: Optional[int] = None,
    progress: Any = None,
    block_size: Optional[int] = None,
    stream_block: Optional[int] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> ChunkCounts:
    """Counts the chunks of ``data`` in the Rust core.

    ``data`` is a str (one document), a path, or an iterable of str and paths
    (streamed: str items are gathered into batches of about 8 M characters,
    never all at once). A path is a text file (one document, counted in
    parallel ranges), a Parquet or JSONL shard (one document per row / line),
    a directory or a glob (see :mod:`bytepair.shards.paths`). Special tokens
    are cut out. ``inputs`` (:class:`~bytepair.documents.Inputs`, or its
    fields as keywords) says how the data is read: the Parquet column and
    JSONL field of the text, the ``documents`` separator, the per-file
    ``cache_dir`` (each file's table is saved there as soon as it is counted
    and loaded instead of counted when present, so a run stopped by Ctrl-C
    resumes where it stopped; the merged counts are those of an uncached run),
    and ``memory_limit`` (past the counting tables' share of it, they are
    spilled to sorted runs in a temporary directory and merged exactly at the
    end; see :mod:`bytepair.memory`). ``progress`` is a
    :class:`~bytepair.progress.TrainProgress` or None. ``block_size`` /
    ``stream_block`` tune the task and read sizes (results never depend on
    them; tests use tiny values).

    >>> count_chunks(["ab", "ab\\n\\nab"], pattern=None, documents="\\n\\n").as_dict()
    {b'ab': 3}
    """
    setup = _setup(pattern, special_tokens, num_threads, progress, block_size, stream_block,
                   Inputs.of(inputs, options, "count_chunks"))
    cache = setup.inputs.cache_dir
    if cache is not None and os.path.exists(cache) and not os.path.isdir(cache):
        raise TrainingError(f"cache_dir {os.fspath(cache)} is a file, not a folder: give a folder (it is created "
                            "if missing)", argument="cache_dir")
    if setup.inputs.cache_dir is not None:
        return _count_cached(data, setup)
    return setup.finish(_fed_counter(data, setup))


def count_chunks_or_runs(data: Data, *, pattern: Optional[str], special_tokens: Sequence[str] = (),
                         num_threads: Optional[int] = None, progress: Any = None,
                         inputs: Inputs) -> Union[ChunkCounts, "_core.SpilledRuns"]:
    """:func:`count_chunks`, except that counts spilled to disk under ``inputs.memory_limit`` come back
    as the sorted runs, not merged into a table (superword stage 2 learns from them without one; see
    :func:`bytepair.superword.stage2_merges`). With a ``cache_dir``, always the table."""
    if inputs.cache_dir is not None:
        return count_chunks(data, pattern=pattern, special_tokens=special_tokens, num_threads=num_threads,
                            progress=progress, inputs=inputs)
    setup = _setup(pattern, special_tokens, num_threads, progress, None, None, inputs)
    got = _fed_counter(data, setup).finish_or_runs()
    if isinstance(got, _core.ChunkTable):
        return ChunkCounts.from_table(got, setup.pattern, setup.special_tokens)
    return got


def _fed_counter(data: Data, setup: _Setup) -> "_core.ChunkCounter":
    """A counter fed every item of ``data``, in order, not finished."""
    counter = setup.counter()
    plain = _PlainFiles()
    for item in _items(data):
        if isinstance(item, _TextBatch):
            plain.flush(counter, setup)
            _feed_texts(counter, item, setup)
            continue
        if os.path.isdir(item):
            plain.flush(counter, setup)
            _feed_folder(counter, os.fspath(item), setup)
            continue
        for path, _ in iter_entries(item):
            if plain.take(path):
                if len(plain.paths) >= FILES_PER_CALL:
                    plain.flush(counter, setup)
                continue
            plain.flush(counter, setup)
            if counter.claim_file(path):  # a file named twice is read once
                _feed_file(counter, path, setup)
                _progress_file(setup.progress, path)
    plain.flush(counter, setup)
    return counter


def _count_cached(data: Data, setup: _Setup) -> ChunkCounts:
    """:func:`count_chunks` with a cache folder: each file's table is loaded
    from it, or counted and saved there."""
    counter = setup.counter()
    done: Optional[ChunkCounts] = None  # the tables of the parts before, in input order
    seen: Set[Hashable] = set()  # the files read so far: a file named twice is read once
    for item in _items(data):
        if isinstance(item, _TextBatch):
            _feed_texts(counter, item, setup)
            continue
        for path in expand(item):
            key = file_key(path)
            if key in seen:
                continue
            seen.add(key)
            if len(counter):  # the str documents before this file, in order
                done = _joined(done, setup.finish(counter))
                counter = setup.counter()
            done = _joined(done, _cached_file_counts(path, setup))
            _progress_file(setup.progress, path)
    return _joined(done, setup.finish(counter))


def _setup(pattern: Optional[str], special_tokens: Sequence[str], num_threads: Optional[int], progress: Any,
           block_size: Optional[int], stream_block: Optional[int], inputs: Inputs) -> _Setup:
    """The run's settings, checked; the counting tables get their share of ``inputs.memory_limit``, and
    the table merged from their spilled runs may take all of it."""
    threads = _threads(num_threads)
    core_options: Dict[str, Any] = {}
    if block_size is not None:
        core_options["block_size"] = block_size
    if stream_block is not None:
        core_options["stream_block"] = stream_block
    limit = inputs.limit()
    if limit is not None:
        core_options["memory_limit"] = _memory.counting_share(limit, threads)
        core_options["table_limit"] = limit  # the table merged from spilled runs
    return _Setup(_patterns.resolve(pattern), validate_specials(special_tokens), inputs, threads, core_options, progress)


def _joined(done: Optional[ChunkCounts], more: ChunkCounts) -> ChunkCounts:
    """``more`` after ``done`` (first-seen order kept)."""
    return more if done is None else done.update(more)


# ---------------------------------------------------------------- inputs


@dataclass
class _TextBatch:
    """str documents counted in one parallel call, and their size in UTF-8 bytes."""

    texts: List[str]
    size: int


def _items(data: Data) -> Iterator[Union[_TextBatch, "os.PathLike[str]"]]:
    """The input in order: str documents gathered into batches of about
    :data:`BATCH_CHARS`, and each path given (expanded later)."""
    if isinstance(data, str):
        yield _TextBatch([data], utf8_len(data))
        return
    if isinstance(data, os.PathLike):
        yield data
        return
    if isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("training data must be str, not bytes; decode it first")
    try:
        items = iter(data)
    except TypeError:
        raise TypeError(f"training data must be str, a path or an iterable of them, got {type(data).__name__}") from None
    batch = _TextBatch([], 0)
    for item in items:
        if isinstance(item, str):
            batch.texts.append(item)
            batch.size += utf8_len(item)
            if batch.size >= BATCH_CHARS:
                yield batch
                batch = _TextBatch([], 0)
        elif isinstance(item, os.PathLike):
            if batch.texts:
                yield batch
                batch = _TextBatch([], 0)
            yield item
        else:
            raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")
    if batch.texts:
        yield batch


# ---------------------------------------------------------------- counting


def _feed_texts(counter: "_core.ChunkCounter", batch: _TextBatch, setup: _Setup) -> None:
    try:
        counter.feed_texts(batch.texts, setup.callback())
    except UnicodeEncodeError:  # lone surrogates: repaired as encode repairs them (nothing was fed yet)
        counter.feed_texts([fix_surrogates(t) for t in batch.texts], setup.callback())
    if setup.progress is not None:
        setup.progress.counted(batch.size)


class _PlainFiles:
    """Plain text files waiting to be counted in one core call (a call per
    file of a kilobyte would cost more than its counting); flushed before any
    other input, so the order is kept. No file is looked up here: the core
    opens each once, and its type, size and identity come from that."""

    def __init__(self) -> None:
        self.paths: List[str] = []

    def take(self, path: str) -> bool:
        """Queues ``path`` when its name says plain text (see :func:`shard_kind`)."""
        if path.lower().endswith(_NOT_PLAIN):
            kind, gz = shard_kind(path)
            if kind != "text" or gz:
                return False
        self.paths.append(path)
        return True

    def flush(self, counter: "_core.ChunkCounter", setup: _Setup) -> None:
        if not self.paths:
            return
        paths, self.paths = self.paths, []
        try:
            n = counter.feed_text_files(paths, setup.callback())
        except ReadError as e:
            _raise_os_error(e)
            raise
        if setup.progress is not None:
            setup.progress.counted(n)


def _feed_folder(counter: "_core.ChunkCounter", top: str, setup: _Setup) -> None:
    """Counts every file under the folder ``top`` in the order of
    :func:`~bytepair.shards.paths.iter_entries`: the core walks it and reads
    the plain text files as it finds them (no path comes back here), and
    hands back each shard (JSONL, Parquet, gzip) to be read here, in its
    place."""
    walk = _core.FolderWalk(top)
    over = False
    while not over:
        try:
            n, shard, over = counter.feed_walk(walk, FILES_PER_CALL, setup.callback())
        except ReadError as e:
            _raise_os_error(e)
            raise
        if setup.progress is not None:
            setup.progress.counted(n)
        if shard is not None and counter.claim_file(shard):  # a file named twice is read once
            _feed_file(counter, shard, setup)
            _progress_file(setup.progress, shard)
    if not walk.found:
        raise empty_folder_error(top)


def _raise_os_error(e: ReadError) -> None:
    """Raises Python's own error (``FileNotFoundError``, ``PermissionError``)
    for a file the core could not open, as ``open`` names it."""
    path = getattr(e, "path", None)
    if path is not None and getattr(e, "offset", None) is None:
        with open(path, "rb"):
            pass


def _feed_file(counter: "_core.ChunkCounter", path: str, setup: _Setup) -> None:
    """Counts one file (text, JSONL or Parquet, by its name) into ``counter``."""
    # Opened here first so a missing or unreadable file raises Python's own
    # OSError naming the path (the core's error would not name it).
    with open(path, "rb"):
        pass
    kind, gz = shard_kind(path)
    if kind == "text" and not gz:
        counter.feed_file(path, setup.callback())
    else:
        # pyarrow reads the Parquet files the core's reader does not (other codecs)
        column = setup.inputs.column_of(kind)
        loader = functools.partial(parquet_columns, column) if kind == "parquet" else None
        counter.feed_shard(path, kind, column, gz, setup.callback(), loader)


def _progress_file(progress: Any, path: str) -> None:
    if progress is not None:
        try:
            progress.counted(os.path.getsize(path))
        except OSError:
            pass


# ---------------------------------------------------------------- the per-file cache


def _cached_file_counts(path: str, setup: _Setup) -> ChunkCounts:
    """One file's counts: loaded from the cache when there, else counted and saved there."""
    assert setup.inputs.cache_dir is not None  # the caller counts uncached files itself
    folder = os.fspath(setup.inputs.cache_dir)
    kind, _ = shard_kind(path)
    key = _cache_key(path, setup.pattern, setup.special_tokens, setup.inputs.documents, kind,
                     setup.inputs.column_of(kind))
    cached = os.path.join(folder, key + ".bpc")
    if os.path.exists(cached):
        try:
            return ChunkCounts.load(cached)
        except (FormatError, OSError) as e:  # a disk error, an edit: counted again and replaced
            warnings.warn(f"the cached counts {cached} are damaged ({e}); counting the file again and replacing "
                          "them", stacklevel=4)
    one = setup.counter()
    _feed_file(one, path, setup)
    table = setup.finish(one)
    os.makedirs(folder, exist_ok=True)
    table.save(cached)
    return table


def _cache_key(path: str, pattern: Optional[str], specials: Sequence[str], documents: Optional[str],
               kind: str, column: str) -> str:
    """The cache name of one file's counts: a hash of its content and of
    everything that changes its counts."""
    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    what = json.dumps([_VERSION, pattern, list(specials), documents, kind, column])
    return h.hexdigest() + "-" + hashlib.blake2b(what.encode("utf-8"), digest_size=8).hexdigest()



#: The former name of :func:`count_chunks`, kept for code written against it.
count = count_chunks
