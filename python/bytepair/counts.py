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

import hashlib
import json
import os
import pathlib
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _core
from . import patterns as _patterns
from .atomic import atomic_write_bytes
from .checks import check_threads, fix_surrogates, validate_specials
from .errors import CorruptCountsError, FormatError, TrainingError
from .shards.paths import expand, shard_kind

PathLike = Union[str, "os.PathLike[str]"]
Data = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

#: Characters of str documents gathered before one parallel counting call.
BATCH_CHARS = 8 << 20
#: Text files of at most this many bytes are read and counted in batches (of
#: about BATCH_CHARS bytes) instead of one core call each.
SMALL_FILE = 1 << 20


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
            raise ValueError("cannot merge chunk counts made with different patterns")
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
    """Bytes to count when known up front (a str or paths), for the progress line."""
    if isinstance(data, str):
        return utf8_len(data)
    if isinstance(data, os.PathLike):
        data = [data]
    if isinstance(data, (list, tuple)) and all(isinstance(x, os.PathLike) for x in data):
        try:
            return sum(os.path.getsize(f) for x in data for f in expand(x))
        except (OSError, TrainingError):
            return None
    return None


def count_chunks(
    data: Data,
    *,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    num_threads: Optional[int] = None,
    documents: Optional[str] = None,
    progress=None,
    block_size: Optional[int] = None,
    stream_block: Optional[int] = None,
    text_column: str = "text",
    text_field: str = "text",
    memory_limit: Optional[int] = None,
    cache_dir: Optional[PathLike] = None,
) -> ChunkCounts:
    """Counts the chunks of ``data`` in the Rust core.

    ``data`` is a str (one document), a path, or an iterable of str and paths
    (streamed: str items are gathered into batches of about 8 M characters,
    never all at once). A path is a text file (one document, counted in
    parallel ranges), a Parquet or JSONL shard (one document per row / line:
    the string in ``text_column`` / under ``text_field``), a directory or a
    glob (see :mod:`bytepair.shards.paths`). Special tokens are cut out;
    ``documents`` is an optional separator: each document is further split at
    it (the separator is dropped), so with ``pattern=None`` every such document
    is one chunk. ``progress`` is a :class:`~bytepair.progress.TrainProgress` or
    None. ``block_size``/``stream_block`` tune the task and read sizes (results
    never depend on them; tests use tiny values). ``memory_limit`` (bytes): the
counting tables' limit; past it they are spilled to sorted runs in a
temporary directory and merged exactly at the end (see :mod:`bytepair.memory`).
    ``cache_dir``: each file's table is saved there (``.bpc``, keyed by the
    file's content hash, the pattern, the special tokens, the separator and
    the text column / field) as soon as it is counted, and loaded instead of
    counted when present, so a run stopped by Ctrl-C resumes where it
    stopped; the merged counts are those of an uncached run.

    >>> count_chunks(["ab", "ab\\n\\nab"], pattern=None, documents="\\n\\n").as_dict()
    {b'ab': 3}
    """
    pat = _patterns.resolve(pattern)
    special_tokens = validate_specials(special_tokens)
    if documents is not None and (not isinstance(documents, str) or not documents):
        raise TrainingError(f"documents must be a non-empty separator str or None, got {documents!r}")
    kwargs: Dict[str, Any] = {}
    if block_size is not None:
        kwargs["block_size"] = block_size
    if stream_block is not None:
        kwargs["stream_block"] = stream_block
    if memory_limit is not None:
        kwargs["memory_limit"] = memory_limit
    threads = _threads(num_threads)
    counter = _core.ChunkCounter(pat, list(special_tokens), documents, threads, **kwargs)
    cb_of = progress.counting if progress is not None else (lambda: None)
    # with a cache: the counts so far, files merged in as whole tables in input order
    done = ChunkCounts(pattern=pat, special_tokens=special_tokens)

    def feed_texts(batch: List[str], size: int) -> None:
        flush_small()
        try:
            counter.feed_texts(batch, cb_of())
        except UnicodeEncodeError:  # lone surrogates: repaired as encode repairs them (nothing was fed yet)
            counter.feed_texts([fix_surrogates(t) for t in batch], cb_of())
        if progress is not None:
            progress.counted(size)

    if not isinstance(text_column, str) or not text_column or not isinstance(text_field, str) or not text_field:
        raise TrainingError(f"text_column and text_field must be non-empty str, got {text_column!r}, {text_field!r}")

    # small text files waiting to be counted in one pass (a pass per file of a
    # kilobyte cost more than its counting); flushed before any other input
    small: List[str] = []
    small_bytes = 0

    def flush_small() -> None:
        nonlocal small, small_bytes
        if small:
            counter.feed_small_files(small, cb_of())
            if progress is not None:
                progress.counted(small_bytes)
            small, small_bytes = [], 0

    def feed_file(given: "os.PathLike[str]") -> None:
        nonlocal counter, small_bytes
        for path in expand(given):
            kind, gz = shard_kind(path)
            size = os.stat(path).st_size  # a missing file: Python's own error, naming it
            if cache_dir is None and kind == "text" and not gz and size <= SMALL_FILE:
                small.append(path)  # an unreadable one: a ReadError naming it
                small_bytes += size
                if small_bytes >= BATCH_CHARS:
                    flush_small()
                continue
            flush_small()
            # Opened here first so an unreadable file raises Python's own
            # OSError naming the path (the core's error would not name it).
            with open(path, "rb"):
                pass
            column = text_column if kind == "parquet" else text_field
            if cache_dir is None:
                _feed_shard(counter, path, kind, gz, column, cb_of())
            else:
                if len(counter):  # the str documents before this file, in order
                    done.update(ChunkCounts.from_table(counter.finish(), pat, special_tokens))
                    counter = _core.ChunkCounter(pat, list(special_tokens), documents, threads, **kwargs)
                key = _cache_key(path, pat, special_tokens, documents, kind, column)
                cached = os.path.join(os.fspath(cache_dir), key + ".bpc")
                if os.path.exists(cached):
                    done.update(ChunkCounts.load(cached))
                else:
                    one = _core.ChunkCounter(pat, list(special_tokens), documents, threads, **kwargs)
                    _feed_shard(one, path, kind, gz, column, cb_of())
                    table = ChunkCounts.from_table(one.finish(), pat, special_tokens)
                    os.makedirs(os.fspath(cache_dir), exist_ok=True)
                    table.save(cached)
                    done.update(table)
            if progress is not None:
                try:
                    progress.counted(os.path.getsize(path))
                except OSError:
                    pass

    if isinstance(data, str):
        feed_texts([data], utf8_len(data))
    elif isinstance(data, os.PathLike):
        feed_file(data)
    elif isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("training data must be str, not bytes; decode it first")
    else:
        try:
            items = iter(data)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(f"training data must be str, a path or an iterable of them, got {type(data).__name__}") from None
        batch: List[str] = []
        size = 0
        for item in items:
            if isinstance(item, str):
                batch.append(item)
                size += utf8_len(item)
                if size >= BATCH_CHARS:
                    feed_texts(batch, size)
                    batch, size = [], 0
            elif isinstance(item, os.PathLike):
                if batch:
                    feed_texts(batch, size)
                    batch, size = [], 0
                feed_file(item)
            else:
                raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")
        if batch:
            feed_texts(batch, size)
    flush_small()
    rest = ChunkCounts.from_table(counter.finish(), pat, list(special_tokens))
    if cache_dir is None:
        return rest
    return done.update(rest)


def _feed_shard(counter: "_core.ChunkCounter", path: str, kind: str, gz: bool, column: str, cb) -> None:
    if kind == "text" and not gz:
        counter.feed_file(path, cb)
    else:
        counter.feed_shard(path, kind, column, gz, cb)


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
