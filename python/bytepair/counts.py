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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChunkCounts):
            return NotImplemented
        return self.pattern == other.pattern and list(self._counts.items()) == list(other._counts.items())

    def __repr__(self) -> str:
        return f"<ChunkCounts {len(self):,} distinct chunks, {self.total():,} total>"


PathLike = Union[str, "os.PathLike[str]"]
