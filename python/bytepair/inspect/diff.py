"""Compare two tokenizers' vocabularies and encodings (``bytepair diff A B``).

Tokens are matched by their bytes. For the tokens both have:

* **ids differ**: the same bytes have another id;
* **moved in merge order**: multi-byte tokens outside the longest run that both
  vocabularies make in the same relative order (the fewest shared tokens whose
  removal leaves the two orders equal), so one token moved early shows as one;
* **built from another pair**: the last merge that makes the token joins other
  parts (e.g. ``" t" + "he"`` against ``" th" + "e"``).

With a text, every document is encoded by both and the documents whose token
boundaries differ are shown aligned, one differing stretch at a time.

>>> from bytepair import Tokenizer
>>> base = [bytes([i]) for i in range(256)]
>>> a = Tokenizer(base + [b"ab", b"abc", b"xy"], pattern=None, name="a")
>>> b = Tokenizer(base + [b"bc", b"abc", b"ab"], pattern=None, name="b")
>>> d = diff(a, b, ["abcd xy"])
>>> [show_bytes(t) for t, _ in d.only_a], [show_bytes(t) for t, _ in d.only_b]
(['xy'], ['bc'])
>>> [(show_bytes(t), i, j) for t, i, j in d.id_changed]
[('ab', 256, 258)]
>>> print(d.documents[0].aligned())   # one differing stretch, with one token of context
a: ·|x y
b: ·|x|y
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import patterns
from ..render.text import TableResult, display_width, show_bytes, visible
from ..tokenizer import Tokenizer
from .common import TextSource, TokenizerSpec, read_documents, resolve_tokenizer


@dataclass
class Segment:
    """A stretch of a document where the two tokenizations cut differently
    (both sides cover the same bytes, from byte ``start``)."""

    start: int
    a: list[bytes]
    b: list[bytes]


@dataclass
class DocumentDiff:
    """One document encoded by both tokenizers.

    Attributes:
        index: the document's position (from 0).
        tokens_a, tokens_b: its token counts.
        segments: the stretches where the token boundaries differ (empty when the
            two cut the document into the same pieces).
    """

    index: int
    tokens_a: int
    tokens_b: int
    segments: list[Segment] = field(default_factory=list)
    names: tuple[str, str] = ("a", "b")

    @property
    def same(self) -> bool:
        """True when both cut the document into the same token strings."""
        return not self.segments

    def aligned(self, limit: int = 3) -> str:
        """The first ``limit`` differing stretches, one line per side: the same text
        on both lines (spaces shown as ``·``), ``|`` where that side cuts and a blank
        where only the other side does, so the cuts line up in columns."""
        lines = []
        wa = max(display_width(n) for n in self.names)
        for seg in self.segments[:limit]:
            sides = [_offsets(seg.a), _offsets(seg.b)]
            cuts = sorted(sides[0] | sides[1])
            raw = b"".join(seg.a)
            atoms = [_atom(raw[x:y]) for x, y in zip([0, *cuts], [*cuts, len(raw)])]
            if any(not _whole(raw[:c]) for c in cuts):  # a cut inside a character: show the text too
                lines.append(f"{'text':<{wa}}: {_atom(raw.decode('utf-8', 'replace'))}")
            for name, mine in zip(self.names, sides):
                row = atoms[0] + "".join(("|" if c in mine else " ") + atom for c, atom in zip(cuts, atoms[1:]))
                lines.append(f"{name:<{wa}}: {row}")
        return "\n".join(lines)


def _offsets(tokens: Sequence[bytes]) -> set[int]:
    """The inner cut offsets of a token list."""
    out, pos = set(), 0
    for t in tokens[:-1]:
        pos += len(t)
        out.add(pos)
    return out


def _whole(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _atom(b: bytes | str) -> str:
    if isinstance(b, str):
        return visible(b).replace(" ", "·")
    return visible(show_bytes(b)).replace(" ", "·")


@dataclass
class Diff(TableResult):
    """What two tokenizers disagree on (see :func:`diff`).

    ``only_a`` / ``only_b`` are ``(bytes, id)``; ``id_changed`` is
    ``(bytes, id_in_a, id_in_b)``; ``moved`` is ``(bytes, id_in_a, id_in_b)``;
    ``pair_changed`` is ``(bytes, (left, right) in a, (left, right) in b)``.
    """

    a: str
    b: str
    n_a: int
    n_b: int
    shared: int
    only_a: list[tuple[bytes, int]]
    only_b: list[tuple[bytes, int]]
    id_changed: list[tuple[bytes, int, int]]
    moved: list[tuple[bytes, int, int]]
    pair_changed: Optional[list[tuple[bytes, tuple[bytes, bytes], tuple[bytes, bytes]]]]
    pattern_a: Optional[str]
    pattern_b: Optional[str]
    specials_a: dict[str, int]
    specials_b: dict[str, int]
    documents: Optional[list[DocumentDiff]] = None

    @property
    def same_vocab(self) -> bool:
        return not self.only_a and not self.only_b and not self.id_changed

    @property
    def differing_documents(self) -> list[DocumentDiff]:
        return [d for d in self.documents or [] if not d.same]

    def _table(self):
        def pat(p: Optional[str]) -> str:
            return "none" if p is None else (patterns.name_of(p) or "custom regex")

        rows: list[list[Any]] = [
            ["mergeable tokens", self.n_a, self.n_b],
            ["only here", len(self.only_a), len(self.only_b)],
            ["shared", self.shared, self.shared],
            ["shared, other id", len(self.id_changed), len(self.id_changed)],
            ["shared, moved in merge order", len(self.moved), len(self.moved)],
            ["shared, built from another pair", "-" if self.pair_changed is None else len(self.pair_changed),
             "-" if self.pair_changed is None else len(self.pair_changed)],
            ["pattern", pat(self.pattern_a), pat(self.pattern_b)],
            ["special tokens", len(self.specials_a), len(self.specials_b)],
        ]
        if self.documents is not None:
            rows.append(["documents", len(self.documents), len(self.documents)])
            rows.append(["tokens of the text", sum(d.tokens_a for d in self.documents),
                         sum(d.tokens_b for d in self.documents)])
            rows.append(["documents cut differently", len(self.differing_documents),
                         len(self.differing_documents)])
        return None, ["", self.a, self.b], rows

    def to_text(self, limit: int = 10) -> str:
        """The summary table, examples of each kind of difference, and the first
        differing documents aligned."""
        out = [super().to_text()]

        def q(b: bytes) -> str:
            return "'" + visible(show_bytes(b)) + "'"

        def section(title: str, items: Sequence[Any], fmt) -> None:
            if items:
                out.append("")
                out.append(f"{title} ({len(items):,}; first {min(limit, len(items))}):")
                out.extend("  " + fmt(x) for x in items[:limit])

        section(f"only in {self.a}", self.only_a, lambda x: f"{x[1]:>7}  {q(x[0])}")
        section(f"only in {self.b}", self.only_b, lambda x: f"{x[1]:>7}  {q(x[0])}")
        section("shared, other id", self.id_changed, lambda x: f"{q(x[0])}: {x[1]} -> {x[2]}")
        section("shared, moved in merge order", self.moved, lambda x: f"{q(x[0])}: {x[1]} -> {x[2]}")
        section("shared, built from another pair", self.pair_changed or [],
                lambda x: f"{q(x[0])}: {q(x[1][0])} + {q(x[1][1])} -> {q(x[2][0])} + {q(x[2][1])}")
        if self.documents is not None:
            out.append("")
            out.append(f"tokens per document ({self.a} / {self.b}): "
                       + ", ".join(f"{d.tokens_a}/{d.tokens_b}" for d in self.documents[:limit])
                       + (" ..." if len(self.documents) > limit else ""))
            for d in self.differing_documents[:3]:
                out.append("")
                out.append(f"document {d.index}: {d.tokens_a} vs {d.tokens_b} tokens, first cut differently at byte "
                           f"{d.segments[0].start}")
                out.append(d.aligned())
        return "\n".join(out)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (token bytes as their text with ``\\xNN`` for partial characters)."""
        s = show_bytes
        return {
            "a": self.a, "b": self.b, "n_a": self.n_a, "n_b": self.n_b, "shared": self.shared,
            "only_a": [{"text": s(t), "id": i} for t, i in self.only_a],
            "only_b": [{"text": s(t), "id": i} for t, i in self.only_b],
            "id_changed": [{"text": s(t), "id_a": i, "id_b": j} for t, i, j in self.id_changed],
            "moved": [{"text": s(t), "id_a": i, "id_b": j} for t, i, j in self.moved],
            "pair_changed": None if self.pair_changed is None else [
                {"text": s(t), "pair_a": [s(x) for x in pa], "pair_b": [s(x) for x in pb]}
                for t, pa, pb in self.pair_changed],
            "pattern_a": self.pattern_a, "pattern_b": self.pattern_b,
            "specials_a": self.specials_a, "specials_b": self.specials_b,
            "documents": None if self.documents is None else [
                {"index": d.index, "tokens_a": d.tokens_a, "tokens_b": d.tokens_b, "same": d.same,
                 "segments": [{"start": g.start, "a": [s(t) for t in g.a], "b": [s(t) for t in g.b]}
                              for g in d.segments]}
                for d in self.documents],
        }


def _longest_common_order(seq: Sequence[int]) -> set[int]:
    """Indexes of one longest strictly increasing subsequence of ``seq``."""
    tails: list[int] = []  # tails[k] = smallest last value of an increasing run of length k+1
    tail_idx: list[int] = []
    prev = [-1] * len(seq)
    for i, v in enumerate(seq):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_idx.append(i)
        else:
            tails[k] = v
            tail_idx[k] = i
        prev[i] = tail_idx[k - 1] if k else -1
    keep: set[int] = set()
    i = tail_idx[-1] if tail_idx else -1
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def _pairs(tok: Tokenizer) -> Optional[dict[bytes, tuple[bytes, bytes]]]:
    """Token bytes -> the bytes of the pair whose merge makes it, or None when the
    merge list cannot be derived (a vocabulary whose tokens are not all built by merges)."""
    try:
        merges = tok.merges
    except (ValueError, KeyError):
        return None
    tokens = tok.token_bytes_list
    multi = [t for t in tokens if len(t) > 1]
    return {t: (tokens[x], tokens[y]) for t, (x, y) in zip(multi, merges)}


def _segments(a: list[bytes], b: list[bytes], context: int = 1) -> list[Segment]:
    """The stretches between shared boundaries where the cuts differ, with
    ``context`` equal tokens kept on each side."""
    out: list[Segment] = []
    i = j = 0
    pa = pb = 0  # byte offsets at a[i], b[j]
    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b) and a[i] == b[j]:
            pa += len(a[i])
            pb += len(b[j])
            i += 1
            j += 1
            continue
        start, i0, j0 = pa, i, j
        # advance the side that is behind until the offsets meet again
        while True:
            if pa <= pb and i < len(a):
                pa += len(a[i])
                i += 1
            elif j < len(b):
                pb += len(b[j])
                j += 1
            else:
                break
            if pa == pb:
                break
        # the context before: equal tokens just before the stretch, on both sides
        k = 0
        while k < context and i0 - k > 0 and j0 - k > 0 and a[i0 - k - 1] == b[j0 - k - 1]:
            k += 1
        lo_a, lo_b = i0 - k, j0 - k
        hi_a, hi_b = i, j
        for _ in range(context):
            if hi_a < len(a) and hi_b < len(b) and a[hi_a] == b[hi_b]:
                hi_a += 1
                hi_b += 1
        before = sum(len(t) for t in a[lo_a:i0])
        out.append(Segment(start - before, a[lo_a:hi_a], b[lo_b:hi_b]))
    return out


def diff(a: TokenizerSpec, b: TokenizerSpec, text: TextSource | None = None) -> Diff:
    """Compares two tokenizers (objects, bundled encoding names or tokenizer files).

    ``text`` (a str, a path, or a list of them: each is one document) adds
    per-document token counts and the stretches where the two cut differently.

    >>> d = diff("cl100k_base", "o200k_base", "Hello 토큰")
    >>> d.shared > 30_000, d.documents[0].tokens_a, d.documents[0].tokens_b
    (True, 6, 3)
    """
    ta, tb = resolve_tokenizer(a), resolve_tokenizer(b)
    if not isinstance(ta, Tokenizer) or not isinstance(tb, Tokenizer):
        bad = tb if isinstance(ta, Tokenizer) else ta
        raise TypeError(f"diff takes byte-level Tokenizers, got {type(bad).__name__}")
    name_a = ta.name or "a"
    name_b = tb.name or "b"
    if name_a == name_b:
        name_a, name_b = name_a + " (a)", name_b + " (b)"
    toks_a: list[bytes] = ta.token_bytes_list
    toks_b: list[bytes] = tb.token_bytes_list
    # b"" is a gap (an id without a mergeable token, see Tokenizer.gaps)
    id_a = {t: i for i, t in enumerate(toks_a) if t}
    id_b = {t: i for i, t in enumerate(toks_b) if t}
    only_a = [(t, i) for i, t in enumerate(toks_a) if t and t not in id_b]
    only_b = [(t, i) for i, t in enumerate(toks_b) if t and t not in id_a]
    shared = [t for t in toks_a if t and t in id_b]
    id_changed = [(t, id_a[t], id_b[t]) for t in shared if id_a[t] != id_b[t]]
    multi = [t for t in shared if len(t) > 1]  # in a's order
    order_b = [id_b[t] for t in multi]
    keep = _longest_common_order(order_b)
    moved = [(t, id_a[t], id_b[t]) for k, t in enumerate(multi) if k not in keep]
    pairs_a, pairs_b = _pairs(ta), _pairs(tb)
    pair_changed = None
    if pairs_a is not None and pairs_b is not None:
        pair_changed = [(t, pairs_a[t], pairs_b[t]) for t in multi if pairs_a[t] != pairs_b[t]]
    documents = None
    if text is not None:
        docs = read_documents(text)
        enc_a = ta.encode_ordinary_batch(docs)
        enc_b = tb.encode_ordinary_batch(docs)
        documents = []
        for k, (ia, ib) in enumerate(zip(enc_a, enc_b)):
            ba, bb = ta.decode_tokens_bytes(ia), tb.decode_tokens_bytes(ib)
            documents.append(DocumentDiff(k, len(ia), len(ib), _segments(ba, bb), (name_a, name_b)))
    return Diff(name_a, name_b, len(id_a), len(id_b), len(shared), only_a, only_b, id_changed, moved,
                pair_changed, ta.pattern, tb.pattern, dict(ta.special_tokens), dict(tb.special_tokens), documents)


__all__ = ["Diff", "DocumentDiff", "Segment", "diff"]
