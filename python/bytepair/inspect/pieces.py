"""Token boundaries: the pieces a tokenizer makes of a text (with the bytes and
characters each covers) and the merge rank of words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ArgumentError
from ..render.text import Plain, TableResult, plain, show_bytes, show_token, visible
from ..tokenizer import Tokenizer
from .common import (
    TokenizerLike,
    TokenizerSpec,
    encode_plain,
    is_char_tokenizer,
    is_complete_utf8,
    resolve_tokenizer,
    token_bytes,
    tokenizer_name,
)

# ---------------------------------------------------------------- word ranks


@dataclass
class WordRank:
    """When one word became a single token.

    Attributes:
        word: the word as given (mind the leading space: ``" the"``).
        id: its token id, or None if it is not one token.
        merge: the merge that made it (1-based count of multi-byte tokens up to
            ``id``), 0 for a single-byte token, None if it is not one token.
        pieces: the word's tokens (one entry when it is a single token).
        piece_ids: their ids.
    """

    word: str
    id: int | None
    merge: int | None
    pieces: list[bytes]
    piece_ids: list[int]


@dataclass
class WordRanks(TableResult):
    """Seed D's table: the merge at which each word became one token."""

    tokenizer: str
    rows: list[WordRank]

    def _table(self):
        headers = ["word", "merge", "id", "pieces"]
        rows = [[repr(r.word), plain(r.merge), plain(r.id), "|".join(visible(show_bytes(p)) for p in r.pieces)]
                for r in self.rows]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"tokenizer": self.tokenizer, "rows": [
            {"word": r.word, "id": r.id, "merge": r.merge, "pieces": [show_bytes(p) for p in r.pieces],
             "piece_ids": r.piece_ids} for r in self.rows]}


def word_ranks(tokenizer: TokenizerSpec, words: Iterable[str]) -> WordRanks:
    """For each word, the merge number and id at which it became one token, or its
    pieces if it never did.

    >>> from bytepair import train
    >>> tok = train("low lower lowest " * 4, 258, pattern="gpt2")
    >>> print(word_ranks(tok, ["low", " lowest", "x"]).to_text())
    word       merge   id  pieces
    'low'          2  257  low
    ' lowest'      -    -   |low|e|s|t
    'x'            0  120  x
    """
    tok = resolve_tokenizer(tokenizer)
    if isinstance(words, str):
        raise TypeError("word_ranks takes a list of words, not one str")
    multi_prefix: list[int] | None = None
    rows: list[WordRank] = []
    for w in words:
        ids = encode_plain(tok, w)
        pieces = [token_bytes(tok, i) for i in ids]
        if len(ids) == 1:
            i = ids[0]
            if multi_prefix is None:
                multi_prefix = _multi_byte_prefix(tok)
            merge = multi_prefix[i] if i < len(multi_prefix) else None
            rows.append(WordRank(w, i, merge, pieces, ids))
        else:
            rows.append(WordRank(w, None, None, pieces, ids))
    return WordRanks(tokenizer_name(tok), rows)


def _multi_byte_prefix(tok: TokenizerLike) -> list[int]:
    """``out[i]`` = number of multi-byte tokens with id <= i (the merge number of i)."""
    tokens: Sequence[bytes | str]
    if isinstance(tok, Tokenizer):
        tokens = tok.token_bytes_list
    elif is_char_tokenizer(tok):  # ids 0..alphabet are single characters, merges after
        tokens = tok.vocab
    else:
        raise TypeError(f"word ranks need a bytepair Tokenizer or CharTokenizer, got {type(tok).__name__}")
    single = [len(t) <= 1 for t in tokens]
    out, n = [], 0
    for s in single:
        if not s:
            n += 1
        out.append(0 if s else n)
    return out


# ---------------------------------------------------------------- pieces


@dataclass
class Piece:
    """One token of an encoded text.

    Attributes:
        index: position in the token sequence.
        id: the token id.
        bytes: the token's bytes.
        start: byte offset of the token in the UTF-8 text.
        special: True for a special token.
        chars: the ``(start, end)`` character span the token covers, from
            :meth:`Tokenizer.encode_with_offsets` (a token inside a multi-byte
            character covers that character); None for tokenizers without it.
    """

    index: int
    id: int
    bytes: bytes
    start: int
    special: bool = False
    chars: "tuple[int, int] | None" = None

    @property
    def complete(self) -> bool:
        """True when the token is valid UTF-8 on its own (False: part of a character)."""
        return is_complete_utf8(self.bytes)

    @property
    def text(self) -> str:
        """The token decoded alone (partial characters become U+FFFD)."""
        return self.bytes.decode("utf-8", errors="replace")

    @property
    def hex(self) -> str:
        return self.bytes.hex(" ")


@dataclass
class Pieces(TableResult):
    """A text cut into its tokens (see :func:`pieces`)."""

    tokenizer: str
    text: str
    pieces: list[Piece]
    #: tokens of the whole text (more than ``len(pieces)`` when a limit cut the list)
    total: int | None = None

    def __post_init__(self) -> None:
        if self.total is None:
            self.total = len(self.pieces)

    def __len__(self) -> int:
        return len(self.pieces)

    def __iter__(self):
        return iter(self.pieces)

    @property
    def ids(self) -> list[int]:
        return [p.id for p in self.pieces]

    def boundaries(self, sep: str = "|") -> str:
        """The text with ``sep`` between tokens; partial tokens show as ``\\xNN``.

        >>> from bytepair import get_encoding
        >>> print(pieces(get_encoding("gpt2"), "I'm lowest 토큰").boundaries())
        I|'m| lowest| |\\xed|\\x86|\\xa0|\\xed|\\x81|\\xb0
        """
        return sep.join(visible(show_bytes(p.bytes)) for p in self.pieces)

    def _table(self):
        headers = ["#", "id", "bytes", "text", "utf-8"]
        rows = [[Plain(p.index), Plain(p.id), p.hex, show_token(p.bytes),
                 "special" if p.special else ("complete" if p.complete else "partial")] for p in self.pieces]
        n_bytes = len(self.text.encode("utf-8", "surrogatepass"))
        title = (f"{self.tokenizer}: {self.total:,} tokens, {n_bytes:,} bytes, "
                 f"{len(self.text):,} chars")
        if self.total != len(self.pieces):
            title += f" (the first {len(self.pieces):,} shown)"
        return title, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"tokenizer": self.tokenizer, "tokens": self.total, "pieces": [
            {"index": p.index, "id": p.id, "hex": p.bytes.hex(), "text": show_bytes(p.bytes), "start": p.start,
             "chars": list(p.chars) if p.chars is not None else None,
             "complete": p.complete, "special": p.special} for p in self.pieces]}


def pieces(tokenizer: TokenizerSpec, text: str, *, allowed_special: str | Iterable[str] = (),
           limit: int | None = None) -> Pieces:
    """Encodes ``text`` and describes every token: id, bytes, text, and whether it
    is a complete UTF-8 sequence on its own.

    Special-token text is plain text unless listed in ``allowed_special`` (or
    ``"all"``). ``limit`` describes only the first ``limit`` tokens (the whole
    text is still encoded: ``total`` is its token count).

    >>> from bytepair import get_encoding
    >>> [(p.id, p.hex, p.complete) for p in pieces(get_encoding("gpt2"), "한")]
    [(47991, 'ed 95', False), (250, '9c', False)]
    """
    tok = resolve_tokenizer(tokenizer)
    if not isinstance(text, str):
        raise TypeError(f"pieces takes str, got {type(text).__name__}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise TypeError(f"limit must be an int >= 0 or None, got {limit!r}")
    if limit is not None and limit < 0:
        raise ArgumentError(f"limit must be an int >= 0 or None, got {limit!r}", name="limit", low=0)
    ids, special_ids, chars = piece_ids(tok, text, allowed_special)
    shown = ids if limit is None else ids[:limit]
    return Pieces(tokenizer_name(tok), text, describe_pieces(tok, shown, special_ids, chars), total=len(ids))


def piece_ids(tok: TokenizerLike, text: str, allowed_special: str | Iterable[str] = ()) -> tuple[list[int], set[int], list]:
    """The ids of ``text`` (as :func:`pieces` encodes it), the special ids, and each
    token's character span (None where the tokenizer has no offsets)."""
    if isinstance(tok, Tokenizer):
        allowed = "all" if allowed_special == "all" else set(allowed_special)
        ids, spans = tok.encode_with_offsets(text, allowed_special=allowed,  # type: ignore[arg-type]
                                             disallowed_special=())
        chars: list = spans.tolist() if hasattr(spans, "tolist") else list(spans)
        return ids, set(tok.special_tokens.values()), chars
    ids = encode_plain(tok, text)
    return ids, set(), [None] * len(ids)


def describe_pieces(tok: TokenizerLike, ids: Sequence[int], special_ids: set[int], chars: Sequence[Any],
                    first: int = 0, pos: int = 0) -> list[Piece]:
    """:class:`Piece` rows for ``ids`` (with their character spans ``chars``),
    numbered from ``first``, starting at byte ``pos``."""
    out: list[Piece] = []
    for k, i in enumerate(ids, first):
        b = token_bytes(tok, i)
        out.append(Piece(k, i, b, pos, i in special_ids, chars[k - first]))
        pos += len(b)
    return out


