"""The parity report: tokenizers measured side by side on texts by language
(tokens per byte and per character, each language's cost relative to the
first, and the Gini coefficient of the costs, 0 = equal). Parity-aware
*training* is part of the library: :mod:`bytepair.parity`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Sequence, Union

from ..documents import iter_documents
from ..errors import ArgumentError
from ..parity import check_unit
from ..reference import gini
from ..render.text import PerToken, TableResult, format_table
from .common import TokenizerSpec, count_tokens, resolve_tokenizer, tokenizer_name


@dataclass
class ParityRow(PerToken):
    """One tokenizer on one language's text."""

    tokenizer: str
    language: str
    tokens: int
    bytes: int
    chars: int

    def cost(self, unit: str) -> float:
        """Tokens per ``unit`` (``"tokens"``: the token count itself)."""
        return {"bytes": self.tokens_per_byte, "chars": self.tokens_per_char, "tokens": float(self.tokens)}[unit]


@dataclass
class ParityReport(TableResult):
    """Per-language costs of several tokenizers (see :func:`parity`)."""

    tokenizers: List[str]
    languages: List[str]
    rows: List[ParityRow]
    unit: str

    def row(self, tokenizer: str, language: str) -> ParityRow:
        for r in self.rows:
            if r.tokenizer == tokenizer and r.language == language:
                return r
        raise KeyError(f"no row for tokenizer {tokenizer!r} and language {language!r}")

    def relative(self, tokenizer: str, language: str) -> float:
        """The language's cost over the first language's, in the report's unit."""
        first = self.row(tokenizer, self.languages[0]).cost(self.unit)
        return self.row(tokenizer, language).cost(self.unit) / first if first else float("inf")

    def gini(self, tokenizer: str) -> float:
        """Gini coefficient of the languages' costs under one tokenizer."""
        return gini([self.row(tokenizer, g).cost(self.unit) for g in self.languages])

    def worst(self, tokenizer: str) -> ParityRow:
        """The language with the highest cost."""
        return max((self.row(tokenizer, g) for g in self.languages), key=lambda r: r.cost(self.unit))

    def total_tokens(self, tokenizer: str) -> int:
        return sum(self.row(tokenizer, g).tokens for g in self.languages)

    def _table(self):
        headers = ["tokenizer", "language", "tokens", "tokens/byte", "tokens/char", f"vs {self.languages[0]}"]
        rows: List[List[Any]] = []
        for t in self.tokenizers:
            for g in self.languages:
                r = self.row(t, g)
                rows.append([t, g, r.tokens, f"{r.tokens_per_byte:.3f}", f"{r.tokens_per_char:.3f}",
                             f"{self.relative(t, g):.2f}x"])
        summary = [[t, f"{self.gini(t):.3f}", self.worst(t).language, f"{self.worst(t).tokens_per_char:.3f}",
                    self.total_tokens(t)] for t in self.tokenizers]
        title = (f"cost unit: tokens per {self.unit[:-1] if self.unit != 'tokens' else 'text (parallel texts)'}\n"
                 + format_table(["tokenizer", "gini", "worst", "worst tokens/char", "all tokens"], summary) + "\n")
        return title, headers, rows

    def to_dict(self) -> Dict[str, Any]:
        return {
            "unit": self.unit,
            "languages": self.languages,
            "tokenizers": [
                {"name": t, "gini": self.gini(t), "worst": self.worst(t).language, "total_tokens": self.total_tokens(t),
                 "languages": {g: {"tokens": self.row(t, g).tokens, "bytes": self.row(t, g).bytes,
                                   "chars": self.row(t, g).chars, "tokens_per_byte": self.row(t, g).tokens_per_byte,
                                   "tokens_per_char": self.row(t, g).tokens_per_char,
                                   "relative": self.relative(t, g)} for g in self.languages}}
                for t in self.tokenizers
            ],
        }


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    # a path is read as training reads it (a file, a shard, a folder, a glob)
    return "\n\n".join(iter_documents(value))


def parity(
    tokenizers: Union[Mapping[str, TokenizerSpec], Sequence[TokenizerSpec]],
    texts_by_language: Mapping[str, Any],
    *,
    unit: str = "bytes",
) -> ParityReport:
    """Measures every tokenizer on every language's text.

    Args:
        tokenizers: name -> tokenizer, or a list of tokenizers / encoding names /
            tokenizer files.
        texts_by_language: language -> text (a str, a path, or a list of them).
            The first language is the reference for the relative costs.
        unit: what the relative costs and the Gini coefficient compare:
            ``"bytes"`` (tokens per byte), ``"chars"`` or ``"tokens"`` (for
            parallel texts).

    >>> r = parity(["gpt2", "o200k_base"], {"en": "The cat sat.", "ko": "고양이가 앉았다."}, unit="tokens")
    >>> [round(r.relative(t, "ko"), 2) for t in r.tokenizers]
    [5.0, 1.75]
    """
    check_unit(unit)
    if not isinstance(texts_by_language, Mapping) or not texts_by_language:
        raise ArgumentError("texts_by_language must be a non-empty dict of language -> text", name="texts_by_language")
    texts = {str(k): _text_of(v) for k, v in texts_by_language.items()}
    for g, t in texts.items():
        if not t:
            raise ArgumentError(f"the text of language {g!r} is empty", name="texts_by_language")
    if isinstance(tokenizers, Mapping):
        toks = {str(k): resolve_tokenizer(v) for k, v in tokenizers.items()}
    else:
        toks = {}
        for spec in tokenizers:
            obj = resolve_tokenizer(spec)
            label = spec if isinstance(spec, str) and not os.path.exists(spec) else tokenizer_name(obj)
            while label in toks:
                label += "'"
            toks[label] = obj
    if not toks:
        raise ArgumentError("parity needs at least one tokenizer", name="tokenizers")
    rows = []
    for name, tok in toks.items():
        for g, text in texts.items():
            rows.append(ParityRow(name, g, count_tokens(tok, text), len(text.encode("utf-8")), len(text)))
    return ParityReport(list(toks), list(texts), rows, unit)


__all__ = ["ParityReport", "ParityRow", "parity"]
