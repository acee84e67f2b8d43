"""``ChunkCounts``: the table of distinct pre-token chunks and their frequencies.

Training only needs this table, so counting can happen anywhere (many processes,
a cluster) and be merged. The table keeps chunks in **first-seen order**, which
the tie-break rule depends on. Merging the tables of consecutive shards in shard
order gives exactly the first-seen order of the concatenated corpus (a chunk
first appears in the earliest shard that holds it), so distributed counting is
exact.
"""

from __future__ import annotations

import os
from typing import Dict, Iterable, Iterator, Optional, Sequence, Tuple, Union

from . import patterns as _patterns
from . import reference


class ChunkCounts:
    """An ordered ``bytes -> count`` table plus the pattern it was counted with.

    >>> c = ChunkCounts.from_texts(["a b a"], pattern="gpt2")
    >>> list(c.items())
    [(b'a', 1), (b' b', 1), (b' a', 1)]
    """

    def __init__(self, counts: Optional[Dict[bytes, int]] = None, *, pattern: Optional[str] = "o200k",
                 special_tokens: Sequence[str] = ()) -> None:
        self.pattern = _patterns.resolve(pattern)
        self.special_tokens = list(special_tokens)
        self._counts: Dict[bytes, int] = dict(counts or {})

    @classmethod
    def from_texts(cls, texts: Iterable[str], *, pattern: Optional[str] = "o200k",
                   special_tokens: Sequence[str] = ()) -> "ChunkCounts":
        """Counts the chunks of some documents."""
        pat = _patterns.resolve(pattern)
        return cls(reference.count_chunks(texts, pat, special_tokens), pattern=pat,
                   special_tokens=special_tokens)

    def update(self, other: "ChunkCounts") -> "ChunkCounts":
        """Adds ``other``'s counts in place; new chunks go after existing ones, in
        ``other``'s order. Patterns must agree."""
        if other.pattern != self.pattern:
            raise ValueError("cannot merge chunk counts made with different patterns")
        c = self._counts
        for k, n in other._counts.items():
            c[k] = c.get(k, 0) + n
        return self

    def items(self) -> Iterator[Tuple[bytes, int]]:
        return iter(self._counts.items())

    def as_dict(self) -> Dict[bytes, int]:
        return dict(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def total(self) -> int:
        """Number of chunk occurrences counted."""
        return sum(self._counts.values())

    # ------------------------------------------------------------ files

    def save(self, path: "PathLike") -> None:
        """Writes the table atomically in bytepair's chunk-count format (``.bpc``):

        a JSON header line ``{"format": "bytepair-chunk-counts", "version": 1,
        "pattern": ..., "special_tokens": [...], "entries": N}`` then, per chunk in
        first-seen order, a LEB128 byte length, the bytes, and a LEB128 count.
        """
        import json

        from ._io import atomic_write_bytes

        header = {
            "format": _FORMAT, "version": _VERSION, "pattern": self.pattern,
            "special_tokens": self.special_tokens, "entries": len(self._counts),
        }
        out = bytearray(json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n")
        for chunk, n in self._counts.items():
            _put_varint(out, len(chunk))
            out += chunk
            _put_varint(out, n)
        atomic_write_bytes(path, bytes(out))

    @classmethod
    def load(cls, path: "PathLike") -> "ChunkCounts":
        """Reads a file written by :meth:`save`; a damaged file raises FormatError."""
        import json

        from .errors import FormatError

        with open(path, "rb") as f:
            raw = f.read()
        nl = raw.find(b"\n")
        try:
            header = json.loads(raw[:nl].decode("utf-8")) if nl >= 0 else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            header = None
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise FormatError("not a bytepair chunk-count file", path=path)
        if header.get("version") != _VERSION:
            raise FormatError(f"unknown chunk-count file version {header.get('version')!r}", path=path)
        counts: Dict[bytes, int] = {}
        pos = nl + 1
        try:
            for _ in range(int(header["entries"])):
                n, pos = _get_varint(raw, pos)
                if pos + n > len(raw):
                    raise IndexError
                chunk = raw[pos : pos + n]
                pos += n
                c, pos = _get_varint(raw, pos)
                counts[chunk] = c
        except (IndexError, KeyError, ValueError):
            raise FormatError("chunk-count file is truncated or damaged", path=path) from None
        if pos != len(raw):
            raise FormatError("chunk-count file has trailing data", path=path)
        return cls(counts, pattern=header.get("pattern"), special_tokens=header.get("special_tokens", ()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkCounts):
            return NotImplemented
        return self.pattern == other.pattern and list(self._counts.items()) == list(other._counts.items())

    def __repr__(self) -> str:
        return f"<ChunkCounts {len(self):,} distinct chunks, {self.total():,} total>"




PathLike = Union[str, "os.PathLike[str]"]
_FORMAT = "bytepair-chunk-counts"
_VERSION = 1


def _put_varint(out: bytearray, n: int) -> None:
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _get_varint(raw: bytes, pos: int) -> Tuple[int, int]:
    n = shift = 0
    while True:
        b = raw[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, pos
