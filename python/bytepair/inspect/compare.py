"""Side-by-side measures: tokenizers compared on texts, and held-out evaluation
(tokens per byte and character, byte fallback, unknown tokens).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ArgumentError
from ..render.text import PerToken as _PerToken
from ..render.text import TableResult, display_width, per, visible
from .common import (
    SpecialIds,
    TextSource,
    TokenizerSpec,
    count_tokens,
    encode_plain,
    is_char_tokenizer,
    is_complete_utf8,
    read_documents,
    resolve_tokenizer,
    token_bytes,
    tokenizer_name,
)

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


def compare(texts: Mapping[str, str] | Sequence[str], tokenizers: Mapping[str, TokenizerSpec] | Sequence[TokenizerSpec], *,
            allowed_special: SpecialIds = ()) -> Comparison:
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
        raise ArgumentError("compare needs at least one text", name="texts")
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
        raise ArgumentError("compare needs at least one tokenizer", name="tokenizers")
    rows = []
    for label, text in labelled.items():
        nb, nc = len(text.encode("utf-8")), len(text)
        for name, tok in toks.items():
            rows.append(CompareRow(label, name, tok.n_vocab, count_tokens(tok, text, allowed_special), nb, nc))
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


def evaluate(tokenizer: TokenizerSpec, held_out: TextSource, *, allowed_special: SpecialIds = ()) -> Evaluation:
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
    char_level = is_char_tokenizer(tok)
    cache: dict[int, bool] = {}
    for t in texts:
        ids = encode_plain(tok, t, allowed_special)
        n_tokens += len(ids)
        for i in ids:
            if char_level:
                unknown += i == 0
                continue
            ok = cache.get(i)
            if ok is None:
                ok = cache[i] = is_complete_utf8(token_bytes(tok, i))
            fallback += not ok
    return Evaluation(tokenizer_name(tok), sum(len(t.encode("utf-8")) for t in texts), sum(len(t) for t in texts),
                      n_tokens, fallback, unknown)


