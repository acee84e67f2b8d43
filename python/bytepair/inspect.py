"""Look inside tokenizers: merge traces, vocab sweeps, word ranks, token pieces,
cross-language comparisons and held-out evaluation; vocabulary audits
(:func:`audit`, from :mod:`bytepair.audit`) and tokenizer diffs (:func:`diff`,
from :mod:`bytepair.diff`).

Every function returns plain data (dataclasses holding lists and numbers) with
``to_text()`` for a plain-text table, ``to_dict()`` for JSON, and ``__rich__``
so ``rich.print(result)`` draws a table when rich is installed (it is optional).

>>> t = trace("low lower lowest", 4)
>>> [s.num_tokens for s in t.steps]
[13, 10, 8, 6]
>>> print(t.steps[-1].tokens_text())
low| lowe|r| lowe|s|t
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from . import patterns as _patterns
from . import reference
from .audit import Audit, TokenAudit, audit
from .diff import Diff, diff
from .render import PerToken as _PerToken
from .render import Plain, TableResult, bytes_json, display_width, format_table, per, plain, show_bytes, visible
from .tokenizer import Tokenizer

TextSource = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]

#: Texts up to this many UTF-8 bytes keep their full token list at every trace step.
TRACE_TOKENS_LIMIT = 4096



def is_complete_utf8(b: bytes) -> bool:
    """True when ``b`` decodes as UTF-8 on its own.

    >>> is_complete_utf8("토".encode()), is_complete_utf8("토".encode()[:2])
    (True, False)
    """
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True




# ---------------------------------------------------------------- input helpers


def read_documents(source: TextSource) -> list[str]:
    """The documents of a text, a file path, or an iterable of texts and paths."""
    from .train import iter_documents

    return list(iter_documents(source))  # type: ignore[arg-type]


def tokenizer_name(tok: Any) -> str:
    return str(getattr(tok, "name", None) or type(tok).__name__)


def resolve_tokenizer(tok: Any) -> Any:
    """The tokenizer meant by ``tok``: a bundled encoding name, a tokenizer file
    path, or a tokenizer object (returned as it is)."""
    if isinstance(tok, str):
        from .registry import get_encoding, list_encoding_names

        if tok in list_encoding_names():
            return get_encoding(tok)
        if os.path.exists(tok):
            from . import load

            return load(tok)
        raise ValueError(
            f"unknown encoding {tok!r}; available: {', '.join(list_encoding_names())}, or a tokenizer file"
        )
    if isinstance(tok, os.PathLike):
        from . import load

        return load(tok)
    return tok


AllowedSpecial = Union[str, Iterable[str]]


def _encode(tok: Any, text: str, allowed_special: AllowedSpecial = ()) -> list[int]:
    """Ids for ``text``; special-token text is plain text unless listed in
    ``allowed_special`` (or ``"all"``), never an error."""
    if isinstance(tok, Tokenizer):
        if allowed_special == "all" or (allowed_special and not isinstance(allowed_special, str)):
            allowed = "all" if allowed_special == "all" else set(allowed_special)
            return tok.encode(text, allowed_special=allowed, disallowed_special=())  # type: ignore[arg-type]
        return tok.encode_ordinary(text)
    return list(tok.encode(text))


def count_tokens(tok: Any, text: str, allowed_special: AllowedSpecial = ()) -> int:
    """How many tokens ``tok`` makes of ``text``: special-token text counts as plain
    text (as for counting user documents) unless listed in ``allowed_special``.

    >>> from bytepair import get_encoding
    >>> gpt2 = get_encoding("gpt2")
    >>> count_tokens(gpt2, "<|endoftext|>"), count_tokens(gpt2, "<|endoftext|>", "all")
    (7, 1)
    """
    if isinstance(tok, Tokenizer):
        allowed: Any = "all" if allowed_special == "all" else set(allowed_special or ())
        return int(tok.count(text, allowed_special=allowed, disallowed_special=()))
    return len(_encode(tok, text, allowed_special))


def _token_bytes(tok: Any, i: int) -> bytes:
    if hasattr(tok, "decode_single_token_bytes"):
        return tok.decode_single_token_bytes(i)
    return str(tok.vocab[i]).encode("utf-8")  # the character-level tokenizer


def _is_char_tokenizer(tok: Any) -> bool:
    return not isinstance(tok, Tokenizer) and hasattr(tok, "vocab") and not hasattr(tok, "decode_single_token_bytes")


# ---------------------------------------------------------------- trace


@dataclass
class MergeStep:
    """One merge of a training run.

    Attributes:
        merge: the merge number, from 1.
        id: the id of the new token (``255 + merge`` for byte-level BPE).
        left, right: the bytes of the merged pair.
        count: how often the pair occurred when it was chosen (weighted by chunk frequency).
        num_tokens: tokens of the training text after this merge.
        tokens: the training text's tokens after this merge (None for long texts).
    """

    merge: int
    id: int
    left: bytes
    right: bytes
    count: int
    num_tokens: int
    tokens: list[bytes] | None = None

    @property
    def token(self) -> bytes:
        """The bytes of the new token."""
        return self.left + self.right

    def tokens_text(self, sep: str = "|") -> str:
        """The tokens joined by ``sep`` (``""`` when they were not kept)."""
        return _join_tokens(self.tokens, sep)


def _join_tokens(tokens: Sequence[bytes] | None, sep: str = "|") -> str:
    if tokens is None:
        return ""
    return sep.join(visible(show_bytes(t)) for t in tokens)


@dataclass
class Trace(TableResult):
    """Every merge step of training on a text (see :func:`trace`)."""

    pattern: str | None
    num_bytes: int
    start_tokens: list[bytes] | None
    steps: list[MergeStep] = field(default_factory=list)

    @property
    def num_start_tokens(self) -> int:
        """Tokens before any merge (one per byte)."""
        return self.num_bytes

    def _table(self):
        rows: list[list[Any]] = [["start", "", "", "", self.num_bytes, _join_tokens(self.start_tokens)]]
        for s in self.steps:
            rows.append([Plain(s.merge), Plain(s.id), f"{show_bytes(s.left)!r} + {show_bytes(s.right)!r}", s.count,
                         s.num_tokens, s.tokens_text()])
        headers = ["merge", "id", "pair", "count", "tokens", "text after the merge"]
        if self.start_tokens is None:
            headers, rows = headers[:-1], [r[:-1] for r in rows]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data (bytes as ``{"hex", "text"}``)."""
        return {
            "pattern": _patterns.name_of(self.pattern) or self.pattern,
            "num_bytes": self.num_bytes,
            "start_tokens": None if self.start_tokens is None else [show_bytes(t) for t in self.start_tokens],
            "steps": [
                {"merge": s.merge, "id": s.id, "left": bytes_json(s.left), "right": bytes_json(s.right),
                 "token": bytes_json(s.token), "count": s.count, "num_tokens": s.num_tokens,
                 "tokens": None if s.tokens is None else [show_bytes(t) for t in s.tokens]}
                for s in self.steps
            ],
        }


def trace(text: TextSource, num_merges: int, pattern: str | None = None) -> Trace:
    """Trains ``num_merges`` merges on ``text`` and records every step.

    The merges come from :func:`bytepair.train` (same rules, same tie-break); each
    is then replayed on the training text to report the pair's count and the
    token count after it. ``pattern`` defaults to ``None`` (no pre-tokenization:
    merges may cross spaces), as in the toy traces of docs/worked-examples.md; pass ``"gpt2"`` etc.
    to merge inside pre-token chunks only. Training stops early when no pair is
    left, so there may be fewer steps than asked for.

    >>> t = trace("banana bandana", 3)
    >>> [(show_bytes(s.token), s.count, s.num_tokens) for s in t.steps]
    [('an', 4, 10), ('ban', 2, 8), ('ana', 2, 6)]
    """
    from .train import train

    if not isinstance(num_merges, int) or isinstance(num_merges, bool) or num_merges < 0:
        raise ValueError(f"num_merges must be a non-negative int, got {num_merges!r}")
    docs = read_documents(text)
    pat = _patterns.resolve(pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "the corpus supports only N merges": the trace shows it
        tok = train(docs, 256 + num_merges, pattern=pat)
    merges = tok.merges
    total = sum(len(d.encode("utf-8")) for d in docs)
    compiled = reference.compile_pattern(pat)
    keep = total <= TRACE_TOKENS_LIMIT
    sequence: list[bytes] = []
    counts: dict[bytes, int] = {}
    for d in docs:
        for chunk in reference.pretokenize(d, compiled):
            b = chunk.encode("utf-8")
            counts[b] = counts.get(b, 0) + 1
            if keep:
                sequence.append(b)
    # state: chunk bytes -> its current ids (all chunks advance together, as in training)
    state: dict[bytes, tuple[int, ...]] = {b: tuple(b) for b in counts}
    vocab = {i: bytes([i]) for i in range(256)}

    def tokens_now() -> list[bytes] | None:
        if not keep:
            return None
        return [vocab[i] for b in sequence for i in state[b]]

    start = tokens_now()
    # token id -> chunks that may contain it (a superset: entries are never removed),
    # so each merge only revisits the chunks that can hold its pair
    where: dict[int, set[bytes]] = {}
    for b in counts:
        for i in set(b):
            where.setdefault(i, set()).add(b)
    num_tokens = total
    steps: list[MergeStep] = []
    for k, pair in enumerate(merges):
        new_id = 256 + k
        vocab[new_id] = vocab[pair[0]] + vocab[pair[1]]
        seen = 0
        candidates = where.get(pair[0], set()) & where.get(pair[1], set())
        for b in candidates:
            ids = state[b]
            n = sum(1 for x, y in itertools.pairwise(ids) if (x, y) == pair)
            if not n:
                continue
            seen += n * counts[b]
            merged = reference.merge_pair(ids, pair, new_id)
            num_tokens -= (len(ids) - len(merged)) * counts[b]
            state[b] = merged
            where.setdefault(new_id, set()).add(b)
        steps.append(MergeStep(k + 1, new_id, vocab[pair[0]], vocab[pair[1]], seen, num_tokens, tokens_now()))
    return Trace(pattern=pat, num_bytes=total, start_tokens=start, steps=steps)


# ---------------------------------------------------------------- sweep


@dataclass
class SweepRow(_PerToken):
    """Token count of the evaluation text at one vocab size."""

    vocab_size: int
    merges: int
    tokens: int
    bytes: int
    chars: int


@dataclass
class Sweep(TableResult):
    """Token counts against vocab size for one merge list (see :func:`sweep`)."""

    tokenizer: str
    rows: list[SweepRow]

    def _table(self):
        headers = ["vocab", "merges", "tokens", "bytes/token", "chars/token"]
        rows = [[r.vocab_size, r.merges, r.tokens, r.bytes_per_token, r.chars_per_token] for r in self.rows]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"tokenizer": self.tokenizer, "rows": [
            {"vocab_size": r.vocab_size, "merges": r.merges, "tokens": r.tokens, "bytes": r.bytes,
             "chars": r.chars, "bytes_per_token": r.bytes_per_token, "chars_per_token": r.chars_per_token}
            for r in self.rows]}


def sweep(
    source: Tokenizer | TextSource,
    sizes: Sequence[int] | None = None,
    eval_text: TextSource | None = None,
    *,
    merges: Sequence[int] | None = None,
    pattern: str | None = "o200k",
    special_tokens: Sequence[str] = (),
    allowed_special: AllowedSpecial = (),
) -> Sweep:
    """Token count of ``eval_text`` at several vocab sizes of one merge list.

    ``source`` is a :class:`~bytepair.Tokenizer` (or an encoding name) to truncate, or
    training text (str, paths, or a list of them) trained once to the largest size.
    Each smaller size is a truncation of that one merge list (training to a smaller
    size would give exactly the same prefix), never a retraining. Give the sizes as
    vocab sizes (``sizes``) or as merge counts (``merges``). ``eval_text``
    defaults to the training text. Sizes the corpus cannot reach are clipped.
    Special-token text in ``eval_text`` is counted as plain text unless listed in
    ``allowed_special``.

    >>> s = sweep("low lower lowest " * 3, merges=[0, 2, 4], pattern=None)
    >>> [(r.merges, r.tokens) for r in s.rows]
    [(0, 51), (2, 33), (4, 19)]
    """
    from .train import train

    if isinstance(source, str) and eval_text is not None and not _looks_like_text(source):
        source = resolve_tokenizer(source)
    tok_given = isinstance(source, Tokenizer) or hasattr(source, "truncate")
    n_special = len(source.special_tokens) if tok_given else len(special_tokens)  # type: ignore[union-attr]
    if (sizes is None) == (merges is None):
        raise ValueError("give the sizes either as vocab sizes (sizes=) or as merge counts (merges=)")
    for what, given in (("sizes", sizes), ("merges", merges)):
        if given is None:
            continue
        if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
            hint = " (the order is sweep(source, sizes, eval_text))" if isinstance(given, str) else ""
            raise TypeError(f"{what} must be a list of int, got {type(given).__name__} {given!r:.40}{hint}")
        for v in given:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"{what} must be whole numbers (int), got {type(v).__name__} {v!r}")
    if eval_text is not None and not isinstance(eval_text, (str, os.PathLike, list, tuple)):
        raise TypeError(f"eval_text must be a str, a path or a list of them, got {type(eval_text).__name__}")
    wanted = list(sizes) if sizes is not None else [256 + m + n_special for m in merges or ()]
    if not wanted:
        raise ValueError("no sizes to sweep")
    for v in wanted:
        if v < 256 + n_special:
            raise ValueError(f"vocab size {v!r} is below 256 + {n_special} special token{'' if n_special == 1 else 's'}")
    if tok_given:
        base: Any = source
        if eval_text is None:
            raise ValueError("sweeping a tokenizer needs eval_text (the text to count tokens of)")
    else:
        docs = read_documents(source)  # type: ignore[arg-type]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a small corpus stops early; sizes are clipped below
            base = train(docs, max(wanted), pattern=pattern, special_tokens=special_tokens)
        if eval_text is None:
            eval_text = docs
    texts = read_documents(eval_text)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_chars = sum(len(t) for t in texts)
    rows: list[SweepRow] = []
    for v in sorted({min(v, base.n_vocab) for v in wanted}):
        small = base if v == base.n_vocab else base.truncate(v)[0]
        tokens = sum(count_tokens(small, t, allowed_special) for t in texts)
        n_merges = sum(len(t) > 1 for t in small.token_bytes_list)
        rows.append(SweepRow(v, n_merges, tokens, n_bytes, n_chars))
    return Sweep(tokenizer_name(base) if tok_given else "trained on the input", rows)


def _looks_like_text(s: str) -> bool:
    from .registry import list_encoding_names

    return s not in list_encoding_names() and not os.path.exists(s)


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


def word_ranks(tokenizer: Any, words: Iterable[str]) -> WordRanks:
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
        ids = _encode(tok, w)
        pieces = [_token_bytes(tok, i) for i in ids]
        if len(ids) == 1:
            i = ids[0]
            if multi_prefix is None:
                multi_prefix = _multi_byte_prefix(tok)
            merge = multi_prefix[i] if i < len(multi_prefix) else None
            rows.append(WordRank(w, i, merge, pieces, ids))
        else:
            rows.append(WordRank(w, None, None, pieces, ids))
    return WordRanks(tokenizer_name(tok), rows)


def _multi_byte_prefix(tok: Any) -> list[int]:
    """``out[i]`` = number of multi-byte tokens with id <= i (the merge number of i)."""
    if hasattr(tok, "token_bytes_list"):
        tokens: Sequence[Any] = tok.token_bytes_list
        single = [len(t) <= 1 for t in tokens]
    else:  # character-level: ids 0..alphabet are single characters, merges after
        tokens = list(tok.vocab)
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
        rows = [[Plain(p.index), Plain(p.id), p.hex, "'" + visible(show_bytes(p.bytes)) + "'",
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
            {"index": p.index, "id": p.id, "hex": p.bytes.hex(), "text": p.text, "start": p.start,
             "chars": list(p.chars) if p.chars is not None else None,
             "complete": p.complete, "special": p.special} for p in self.pieces]}


def pieces(tokenizer: Any, text: str, *, allowed_special: str | Iterable[str] = (),
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
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise TypeError(f"limit must be an int >= 0 or None, got {limit!r}")
    ids, special_ids, chars = piece_ids(tok, text, allowed_special)
    shown = ids if limit is None else ids[:limit]
    return Pieces(tokenizer_name(tok), text, describe_pieces(tok, shown, special_ids, chars), total=len(ids))


def piece_ids(tok: Any, text: str, allowed_special: str | Iterable[str] = ()) -> tuple[list[int], set[int], list]:
    """The ids of ``text`` (as :func:`pieces` encodes it), the special ids, and each
    token's character span (None where the tokenizer has no offsets)."""
    if isinstance(tok, Tokenizer):
        allowed = "all" if allowed_special == "all" else set(allowed_special)
        ids, spans = tok.encode_with_offsets(text, allowed_special=allowed,  # type: ignore[arg-type]
                                             disallowed_special=())
        chars: list = spans.tolist() if hasattr(spans, "tolist") else list(spans)
        return ids, set(tok.special_tokens.values()), chars
    ids = _encode(tok, text)
    return ids, set(), [None] * len(ids)


def describe_pieces(tok: Any, ids: Sequence[int], special_ids: set[int], chars: Sequence[Any],
                    first: int = 0, pos: int = 0) -> list[Piece]:
    """:class:`Piece` rows for ``ids`` (with their character spans ``chars``),
    numbered from ``first``, starting at byte ``pos``."""
    out: list[Piece] = []
    for k, i in enumerate(ids, first):
        b = _token_bytes(tok, i)
        out.append(Piece(k, i, b, pos, i in special_ids, chars[k - first]))
        pos += len(b)
    return out


# ---------------------------------------------------------------- compare


@dataclass
class CompareRow(_PerToken):
    """One text encoded by one tokenizer."""

    text: str
    tokenizer: str
    n_vocab: int
    tokens: int
    bytes: int
    chars: int


@dataclass
class Comparison(TableResult):
    """Token counts of several texts under several tokenizers (see :func:`compare`)."""

    texts: list[str]
    tokenizers: list[str]
    rows: list[CompareRow]

    def row(self, text: str, tokenizer: str) -> CompareRow:
        """The row for one text label and tokenizer name."""
        for r in self.rows:
            if r.text == text and r.tokenizer == tokenizer:
                return r
        raise KeyError(f"no row for text {text!r} and tokenizer {tokenizer!r}")

    def ratio(self, text: str, baseline: str, tokenizer: str) -> float:
        """How many times more tokens ``text`` needs than ``baseline`` (e.g. Korean
        over English for parallel texts)."""
        base = self.row(baseline, tokenizer).tokens
        return self.row(text, tokenizer).tokens / base if base else float("inf")

    def _table(self):
        headers = ["text", "tokenizer", "n_vocab", "tokens", "bytes/token", "chars/token"]
        multi = len(self.texts) > 1
        if multi:
            headers.append("vs 1st text")
        rows = []
        for r in self.rows:
            row: list[Any] = [_short(r.text), r.tokenizer, r.n_vocab, r.tokens, r.bytes_per_token,
                              r.chars_per_token]
            if multi:
                row.append(f"{self.ratio(r.text, self.texts[0], r.tokenizer):.2f}x")
            rows.append(row)
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data, with ``ratio_to_first`` per row."""
        out = []
        for r in self.rows:
            out.append({"text": r.text, "tokenizer": r.tokenizer, "n_vocab": r.n_vocab, "tokens": r.tokens,
                        "bytes": r.bytes, "chars": r.chars, "bytes_per_token": r.bytes_per_token,
                        "chars_per_token": r.chars_per_token,
                        "ratio_to_first": self.ratio(r.text, self.texts[0], r.tokenizer)})
        return {"texts": self.texts, "tokenizers": self.tokenizers, "rows": out}


def _short(s: str, width: int = 20) -> str:
    s = visible(s)
    if display_width(s) <= width:
        return s
    out = ""
    for ch in s:
        if display_width(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


def compare(texts: Mapping[str, str] | Sequence[str], tokenizers: Mapping[str, Any] | Sequence[Any], *,
            allowed_special: AllowedSpecial = ()) -> Comparison:
    """Tokens, bytes per token and characters per token for every text and tokenizer.

    ``texts`` maps a label (e.g. a language) to its text, or is a list of texts
    (labelled by themselves). ``tokenizers`` maps names to tokenizers, or is a
    list of tokenizers / encoding names. Use :meth:`Comparison.ratio` for "how
    many times more tokens does Korean need than English".

    >>> c = compare(["안녕하세요, 토크나이저입니다."], ["gpt2", "cl100k_base", "o200k_base"])
    >>> [r.tokens for r in c.rows]
    [38, 17, 10]
    """
    if isinstance(texts, str):
        raise TypeError("compare takes a list (or dict) of texts, not one str")
    labelled = dict(texts) if isinstance(texts, Mapping) else {t: t for t in texts}
    if not labelled:
        raise ValueError("compare needs at least one text")
    if isinstance(tokenizers, Mapping):
        toks = {str(k): resolve_tokenizer(v) for k, v in tokenizers.items()}
    else:
        toks = {}
        for t in tokenizers:
            obj = resolve_tokenizer(t)
            name = t if isinstance(t, str) else tokenizer_name(obj)
            while name in toks:
                name += "'"
            toks[name] = obj
    if not toks:
        raise ValueError("compare needs at least one tokenizer")
    rows = []
    for label, text in labelled.items():
        nb, nc = len(text.encode("utf-8")), len(text)
        for name, tok in toks.items():
            n_vocab = getattr(tok, "n_vocab", None)
            if n_vocab is None:
                n_vocab = len(getattr(tok, "vocab", ()))
            rows.append(CompareRow(label, name, int(n_vocab), count_tokens(tok, text, allowed_special), nb, nc))
    return Comparison(list(labelled), list(toks), rows)


# ---------------------------------------------------------------- evaluate


@dataclass
class Evaluation(TableResult, _PerToken):
    """How a tokenizer does on held-out text (see :func:`evaluate`).

    Attributes:
        byte_fallback: tokens that are not a whole UTF-8 character sequence on their
            own (a character the vocabulary spells in raw byte pieces).
        unknown: tokens that stand for an unknown character (id 0 of the
            character-level tokenizer; always 0 for byte-level BPE, which has no
            unknowns).
    """

    tokenizer: str
    bytes: int
    chars: int
    tokens: int
    byte_fallback: int
    unknown: int

    @property
    def byte_fallback_share(self) -> float:
        return per(self.byte_fallback, self.tokens)

    @property
    def unknown_share(self) -> float:
        return per(self.unknown, self.tokens)

    def _table(self):
        headers = ["tokenizer", "tokens", "bytes/token", "chars/token", "byte fallback", "unknown"]
        rows = [[self.tokenizer, self.tokens, self.bytes_per_token, self.chars_per_token,
                 f"{100 * self.byte_fallback_share:.2f}%", f"{100 * self.unknown_share:.2f}%"]]
        return None, headers, rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {"tokenizer": self.tokenizer, "bytes": self.bytes, "chars": self.chars, "tokens": self.tokens,
                "bytes_per_token": self.bytes_per_token, "chars_per_token": self.chars_per_token,
                "byte_fallback": self.byte_fallback, "byte_fallback_share": self.byte_fallback_share,
                "unknown": self.unknown, "unknown_share": self.unknown_share}


def evaluate(tokenizer: Any, held_out: TextSource, *, allowed_special: AllowedSpecial = ()) -> Evaluation:
    """Bytes per token and the share of byte-fallback / unknown tokens on held-out text.

    ``held_out`` is a str, a path, or a list of them.

    >>> from bytepair import get_encoding
    >>> e = evaluate(get_encoding("gpt2"), "토큰 token")
    >>> e.tokens, e.byte_fallback
    (7, 6)
    """
    tok = resolve_tokenizer(tokenizer)
    texts = read_documents(held_out)
    n_tokens = fallback = unknown = 0
    char_level = _is_char_tokenizer(tok)
    cache: dict[int, bool] = {}
    for t in texts:
        ids = _encode(tok, t, allowed_special)
        n_tokens += len(ids)
        for i in ids:
            if char_level:
                unknown += i == 0
                continue
            ok = cache.get(i)
            if ok is None:
                ok = cache[i] = is_complete_utf8(_token_bytes(tok, i))
            fallback += not ok
    return Evaluation(tokenizer_name(tok), sum(len(t.encode("utf-8")) for t in texts), sum(len(t) for t in texts),
                      n_tokens, fallback, unknown)


from .parity import ParityReport, parity

__all__ = [
    "Audit",
    "CompareRow",
    "Comparison",
    "Diff",
    "Evaluation",
    "MergeStep",
    "ParityReport",
    "Piece",
    "Pieces",
    "Plain",
    "Sweep",
    "SweepRow",
    "TokenAudit",
    "Trace",
    "WordRank",
    "WordRanks",
    "audit",
    "compare",
    "count_tokens",
    "diff",
    "display_width",
    "evaluate",
    "format_table",
    "is_complete_utf8",
    "parity",
    "pieces",
    "show_bytes",
    "sweep",
    "trace",
    "visible",
    "word_ranks",
]
