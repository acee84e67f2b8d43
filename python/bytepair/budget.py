"""Token budgets and offsets for applications: count with a limit, cut a text to
a budget at a character boundary, split it into chunks, and say which characters
each token covers.

The loops run in the Rust core (``bytepair._core``: ``count_until``,
``truncate_at``, ``encode_with_spans``); this module owns argument checks and
policy. The :class:`~bytepair.tokenizer.Tokenizer` methods of the same names call
these functions.

Why truncation is not ``decode(encode(text)[:n])``: the n-th token may end inside
a character (decoding then yields U+FFFD or drops bytes), and BPE of a prefix is
not always a prefix of the BPE, so the re-encoded cut text can have *more* than
``n`` tokens. :func:`truncate_text` returns the longest prefix cut at a character
boundary whose own encoding fits, exactly; how the core finds it without
encoding every prefix is explained in ``src/core_bpe/budget.rs`` (restart points
where the encoding provably starts afresh, and an exhaustive search of the one
segment between two of them that holds the answer).

Special tokens and lone surrogates follow :meth:`Tokenizer.encode`'s policy:
disallowed special-token text raises, allowed special tokens count as one
token, and lone surrogates are repaired as tiktoken does (offsets and cuts then
still index the text you passed).
"""

from __future__ import annotations

import collections.abc
from typing import TYPE_CHECKING, Callable, Iterator, List, Literal, Optional, Sequence, Tuple, TypeVar, Union, cast

from . import _core
from .checks import check_text, fix_surrogates
from .errors import ArgumentError
from .special import NO_SPECIALS, check_foreign_disallowed

if TYPE_CHECKING:  # pragma: no cover
    from .special import AllowedSpecial, DisallowedSpecial
    from .tokenizer import Tokenizer

# the offsets type behaves as a read-only sequence of (start, end) tuples
collections.abc.Sequence.register(_core.Spans)

T = TypeVar("T")
Side = Literal["end", "start"]
Boundary = Literal["token", "line", "paragraph"]
Unit = Literal["char", "byte"]


def _positive(name: str, value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 1:
        raise ArgumentError(f"{name} must be at least 1, got {value}", name=name, low=1)
    return value


def _cannot_bind(text: str) -> int:
    """A token budget that no encoding of ``text`` can exceed: every token covers
    at least one UTF-8 byte, and a character is at most 4. Larger budgets are
    clamped to it (they cannot bind, and the core's counts are 64-bit)."""
    return 4 * len(text) + 1


class _Prepared:
    """The text as the core sees it (lone surrogates repaired as ``encode`` does)
    and the core's special-token arguments, plus the index map back to the
    caller's text. ``eager=False`` defers the repair to the first core call that
    refuses the text (the hot paths then pay no UTF-8 check of their own)."""

    def __init__(self, tok: "Tokenizer", text: str, allowed: "AllowedSpecial", disallowed: "DisallowedSpecial",
                 *, eager: bool = True):
        text = check_text(text)
        pol = tok._special_policy(allowed, disallowed).core_args
        if disallowed:
            check_foreign_disallowed(text, disallowed, tok.special_tokens)
        self.original = text
        self.text = text
        self.policy = pol
        self.core = tok._core
        # repaired index -> original index (only when a surrogate pair became one char)
        self._map: Optional[List[int]] = None
        if eager and not text.isascii():
            self._repair()

    def _repair(self) -> None:
        text = self.original
        self.text = fix_surrogates(text)
        if len(self.text) != len(text):
            m, i = [], 0
            for ch in self.text:
                m.append(i)
                i += 2 if ord(ch) > 0xFFFF and ord(text[i]) < 0x10000 else 1
            m.append(i)
            self._map = m

    def call(self, fn: Callable[..., T], *args: object) -> T:
        """``fn(core, text, *args, allowed, disallowed)``, repairing the text first if the core refuses it."""
        try:
            return fn(self.core, self.text, *args, *self.policy)
        except UnicodeEncodeError:
            if self.text is not self.original:
                raise
            self._repair()
            return fn(self.core, self.text, *args, *self.policy)

    def orig(self, i: int) -> int:
        return i if self._map is None else self._map[i]


def count(
    tok: "Tokenizer",
    text: str,
    *,
    limit: Optional[int] = None,
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> int:
    """Tokens of ``text``; with ``limit``, at most ``limit + 1``: the core stops as
    soon as the count exceeds ``limit`` (the sentinel ``limit + 1`` means "over"), so
    the work is proportional to the part read, not the whole text: it reads a
    head of the text, a few times as long as the limit in tokens, and longer
    heads only while the count is not yet over (text the pre-tokenizer has no
    safe cuts in, such as a custom pattern's, is read whole). A disallowed
    special token is looked for in the part read. A limit of at least 4 per
    character cannot bind (every token covers at least one UTF-8 byte): the
    result is then the full count.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("o200k_base")
    >>> enc.count("hello world " * 1000), enc.count("hello world " * 1000, limit=10)
    (2001, 11)
    """
    if limit is None:
        return tok.count(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise TypeError(f"limit must be an int or None, not {type(limit).__name__}")
    if limit < 0:
        raise ArgumentError(f"limit must be at least 0, got {limit}", name="limit", low=0)
    if limit >= 4 * len(check_text(text)):
        return tok.count(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    p = _Prepared(tok, text, allowed_special, disallowed_special, eager=False)
    return p.call(_core.count_until, limit)


def truncate_text(
    tok: "Tokenizer",
    text: str,
    max_tokens: int,
    *,
    side: Side = "end",
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> str:
    """The longest prefix (``side="end"``: the end is cut) or suffix
    (``side="start"``) of ``text``, cut at a character boundary, whose encoding
    has at most ``max_tokens`` tokens. Exact: no longer cut fits, even where the
    count of a prefix is not monotone in its length (then "longest" is still the
    maximum over every character boundary; tests check it against encoding every
    prefix). May be ``""`` when the first character alone needs more tokens.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("cl100k_base")
    >>> enc.truncate_text("The quick brown fox jumps over the lazy dog.", 4)
    'The quick brown fox'
    >>> enc.truncate_text("The quick brown fox jumps over the lazy dog.", 3, side="start")
    ' lazy dog.'
    """
    _positive("max_tokens", max_tokens)
    if side not in ("end", "start"):
        raise ArgumentError(f"side must be 'end' or 'start', not {side!r}", name="side")
    p = _Prepared(tok, text, allowed_special, disallowed_special)
    max_tokens = min(max_tokens, _cannot_bind(p.text))
    n = _core.truncate_at(p.core, p.text, max_tokens, side == "end", *p.policy)
    if side == "end":
        return p.original[: p.orig(n)]
    return p.original[p.orig(len(p.text) - n):]


def _preferred_cut(text: str, start: int, end: int, boundary: Boundary, floor: int) -> int:
    """The last preferred boundary in ``(floor, end]`` (a chunk then ends just after
    a newline or a blank line), else ``end``."""
    if end >= len(text) or boundary == "token":
        return end
    window = text[start:end]
    if boundary == "paragraph":
        i = window.rfind("\n\n")
        if i >= 0 and start + i + 2 > floor:
            j = start + i + 2
            while j < end and text[j] == "\n":
                j += 1
            return j
    i = window.rfind("\n")
    if i >= 0 and start + i + 1 > floor:
        return start + i + 1
    return end


def chunk_spans(
    tok: "Tokenizer",
    text: str,
    max_tokens: int,
    *,
    overlap: int = 0,
    boundary: Boundary = "token",
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> List[Tuple[int, int]]:
    """The ``(start, end)`` character spans of :func:`chunk_text`'s chunks."""
    return list(_chunk_spans(tok, text, max_tokens, overlap, boundary, allowed_special, disallowed_special))


def _longest_token(tok: "Tokenizer") -> int:
    """Bytes of the tokenizer's longest token, special tokens included."""
    specials = (len(s.encode("utf-8")) for s in tok.special_tokens)
    return max(max(map(len, tok.token_bytes_list), default=1), max(specials, default=1))


def _chunk_spans(tok, text, max_tokens, overlap, boundary, allowed_special, disallowed_special) -> Iterator[Tuple[int, int]]:
    _positive("max_tokens", max_tokens)
    if not isinstance(overlap, int) or isinstance(overlap, bool):
        raise TypeError(f"overlap must be an int, not {type(overlap).__name__}")
    if overlap < 0:
        raise ArgumentError(f"overlap must be at least 0, got {overlap}", name="overlap", low=0)
    if overlap >= max_tokens:
        raise ArgumentError(f"overlap ({overlap}) must be smaller than max_tokens ({max_tokens})", name="overlap",
                            low=0, high=max_tokens - 1)
    if boundary not in ("token", "line", "paragraph"):
        raise ArgumentError(f"boundary must be 'token', 'line' or 'paragraph', not {boundary!r}", name="boundary")
    p = _Prepared(tok, text, allowed_special, disallowed_special)
    t = p.text
    max_tokens = min(max_tokens, _cannot_bind(t))
    overlap = min(overlap, max_tokens - 1)
    n_bytes = len(t.encode("utf-8")) if not t.isascii() else len(t)
    # Every call reads only its own chunk, so the walk is linear: the first call
    # sees the whole text and checks it for disallowed special tokens once; the
    # later ones disallow nothing. Each later call's span ends where no longer
    # prefix can fit, past max_tokens x the longest token's bytes (each token
    # covers at most that): the core searches the span for allowed special
    # tokens, and a text without restart points (one long run of letters, CJK
    # without spaces) is one segment that the core reads to its end.
    allowed: List[str] = p.policy[0] or []
    later: Tuple[List[str], List[str]] = (allowed, [])
    window = max_tokens * _longest_token(tok) if n_bytes > max_tokens else n_bytes
    # positions in characters (start, end) and in UTF-8 bytes (bstart, bend): the
    # core walks the one text by byte spans, so nothing is sliced per chunk
    start = bstart = 0
    prev_end = 0
    policy, hi = p.policy, n_bytes
    while start < len(t):
        bend, n = _core.truncate_span(p.core, t, bstart, hi, max_tokens, True, *policy)
        policy = later
        end = start + n
        if end <= start or end <= prev_end:
            # not even the next character fits (or nothing new would be covered)
            at = max(start, prev_end)
            ch = t[at]
            need = _core.count_until(p.core, ch, max_tokens, *p.policy)
            raise ArgumentError(
                f"max_tokens={max_tokens} is smaller than the {need} tokens that the character {ch!r}"
                f" at offset {p.orig(at)} needs on its own; raise max_tokens", name="max_tokens"
            )
        # a preferred boundary must leave the chunk longer than its overlap part
        cut = _preferred_cut(t, start, end, boundary, max(prev_end, start))
        if cut != end:
            bend -= len(t[cut:end].encode("utf-8"))
            end = cut
        yield p.orig(start), p.orig(end)
        if end >= len(t):
            return
        prev_end = end
        if overlap:
            bback, back = _core.truncate_span(p.core, t, bstart, bend, overlap, False, *later)
            if end - back > start:
                start, bstart = end - back, bback
            else:  # the overlap would cover the whole chunk: move on by one character
                bstart += len(t[start].encode("utf-8"))
                start += 1
        else:
            start, bstart = end, bend
        hi = min(n_bytes, bstart + window)


def chunk_text(
    tok: "Tokenizer",
    text: str,
    max_tokens: int,
    *,
    overlap: int = 0,
    boundary: Boundary = "token",
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> List[str]:
    """Splits ``text`` into chunks of at most ``max_tokens`` tokens each (each chunk
    counted on its own). Chunk ``i + 1`` starts with the last ``overlap`` tokens'
    worth of chunk ``i`` (its longest suffix of at most ``overlap`` tokens), so the
    chunks with those overlaps removed concatenate to ``text`` exactly.

    ``boundary="token"`` makes every chunk as long as the budget allows;
    ``"line"`` ends a chunk after the last newline inside the budget, and
    ``"paragraph"`` after the last blank line (else the last newline), when
    there is one beyond the overlap; otherwise the chunk is cut where the budget
    ends.

    Raises ``ValueError`` for ``max_tokens < 1``, a negative ``overlap``, an
    ``overlap`` not smaller than ``max_tokens``, and a budget smaller than the
    tokens one character of the text needs.

    >>> import bytepair
    >>> enc = bytepair.get_encoding("cl100k_base")
    >>> enc.chunk_text("one two three four five six", 3)
    ['one two three', ' four five six']
    >>> enc.chunk_text("one two three four five six", 3, overlap=1)
    ['one two three', ' three four five', ' five six']
    """
    spans = _chunk_spans(tok, text, max_tokens, overlap, boundary, allowed_special, disallowed_special)
    return [text[a:b] for a, b in spans]


def encode_with_offsets(
    tok: "Tokenizer",
    text: str,
    *,
    unit: Unit = "char",
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> Tuple[List[int], Sequence[Tuple[int, int]]]:
    """``encode`` plus the span of text each token covers: ``offsets[i]`` is the
    ``(start, end)`` of token ``i``, in characters of ``text`` (``unit="char"``)
    or bytes of its UTF-8 (``unit="byte"``).

    The rule for tokens inside a multi-byte character: a token covers every
    character it has a byte of. A Korean syllable split over three tokens gives
    all three the syllable's span, and ``start`` is the character holding the
    token's first byte, as tiktoken's ``decode_with_offsets`` reports it. Byte
    spans are exact and tile the text.

    ``offsets`` is a compact read-only sequence (indexing gives tuples;
    ``offsets.tolist()`` a list of them; ``offsets.starts()`` / ``ends()``).

    >>> import bytepair
    >>> enc = bytepair.get_encoding("gpt2")
    >>> ids, offs = enc.encode_with_offsets("hi 한")
    >>> ids, offs.tolist()
    ([5303, 220, 47991, 250], [(0, 2), (2, 3), (3, 4), (3, 4)])
    >>> enc.encode_with_offsets("hi 한", unit="byte")[1].tolist()
    [(0, 2), (2, 3), (3, 5), (5, 6)]
    """
    if unit not in ("char", "byte"):
        raise ArgumentError(f"unit must be 'char' or 'byte', not {unit!r}", name="unit")
    p = _Prepared(tok, text, allowed_special, disallowed_special, eager=False)
    ids, spans = p.call(_core.encode_with_spans, unit)
    if p._map is not None and unit == "char":
        return ids, [(p.orig(a), p.orig(b)) for a, b in spans.tolist()]
    return ids, cast("Sequence[Tuple[int, int]]", spans)


def encode_with_unstable(
    tok: "Tokenizer",
    text: str,
    *,
    allowed_special: "AllowedSpecial" = NO_SPECIALS,
    disallowed_special: "DisallowedSpecial" = None,
) -> Tuple[List[int], List[List[int]]]:
    """tiktoken's ``encode_with_unstable``, with its semantics: ``(stable, completions)``
    where ``stable`` encodes a prefix of ``text`` that no continuation can change
    (all but the last pre-token piece, and before a trailing run of whitespace
    tokens) and each completion is a token sequence that, after ``stable``, starts
    with the rest of the text's bytes. tiktoken calls this API unstable too.

    The candidates are built as tiktoken builds them: every token that starts with
    the unstable bytes; for every split of those bytes into a prefix and a suffix,
    the encoding of the prefix followed by each token starting with the suffix, cut
    after it covers the unstable bytes; and, when they end in whitespace, the
    unstable bytes encoded as two pieces split before that character.
    """
    if allowed_special is NO_SPECIALS and disallowed_special is None and type(text) is str:
        # the default call, without the argument normalisation
        try:
            return tok._core.encode_with_unstable(text, *tok._default_policy.core_args)
        except UnicodeEncodeError:
            pass  # lone surrogates: the general path repairs them
    p = _Prepared(tok, text, allowed_special, disallowed_special, eager=False)
    return p.call(_core.CoreBPE.encode_with_unstable)


def encode_bytes(tok: "Tokenizer", data: bytes) -> List[int]:
    """tiktoken's ``_encode_bytes``: bytes that need not be UTF-8. The valid UTF-8
    prefix is encoded as text (special-token text as plain text); its unstable
    end and the invalid rest are then merged as one piece."""
    if isinstance(data, str):
        raise TypeError("expected bytes, got str; encode text with encode() or encode_ordinary()")
    return tok._core.encode_bytes(bytes(data))


def encode_single_piece(tok: "Tokenizer", text_or_bytes: Union[str, bytes]) -> List[int]:
    """tiktoken's ``_encode_single_piece``: text (or bytes) merged as one piece,
    without the pre-tokenizer; special-token text is plain text."""
    if isinstance(text_or_bytes, str):
        text_or_bytes = fix_surrogates(check_text(text_or_bytes)).encode("utf-8")
    elif not isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
        raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
    return tok._core.encode_single_piece(bytes(text_or_bytes))


def decode_with_offsets(tok: "Tokenizer", tokens: Sequence[int]) -> Tuple[str, List[int]]:
    """tiktoken's ``decode_with_offsets``: ``(text, offsets)``, the decoded text
    and, per token, the index of the character holding its first byte (a token
    that starts inside a character points at that character). Invalid UTF-8
    raises ``UnicodeDecodeError``, as in tiktoken."""
    parts = tok.decode_tokens_bytes(tokens)
    offsets = []
    chars = 0
    for b in parts:
        offsets.append(max(0, chars - (1 if b and 0x80 <= b[0] < 0xC0 else 0)))
        chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
    return b"".join(parts).decode("utf-8", errors="strict"), offsets


__all__ = ["chunk_spans", "chunk_text", "count", "decode_with_offsets", "encode_bytes", "encode_single_piece",
           "encode_with_offsets", "encode_with_unstable", "truncate_text"]
