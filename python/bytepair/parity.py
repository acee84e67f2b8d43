"""Fairness across languages: parity-aware training and the parity report.

**Parity-aware BPE** (Foroutan et al., 2025, arXiv 2508.04796) changes one
thing in training: at every merge step the language whose development text is
currently the most expensive (most tokens per unit of text) chooses the merge,
the most frequent pair of *its own* training text (ties: the pair met first
there); the merge then applies to every language. Standard BPE instead merges
the most frequent pair of the pooled corpus, which favours the language with
the most text. :func:`bytepair.reference.train_parity_from_counts` is the
readable specification; the Rust core gives exactly its merges.

The unit of "expensive" (``parity_unit``): ``"bytes"`` (tokens per UTF-8 byte,
the default: every language starts at 1.0, and for most scripts bytes track
content better than characters do), ``"chars"`` (tokens per character) or
``"tokens"`` (raw token counts: the paper's measure, meaningful only when the
dev texts are translations of one another).

**The parity report** (:func:`parity`) measures tokenizers side by side on
texts by language: tokens per byte and per character, each language's cost
relative to the first, and the Gini coefficient of the costs (0 = equal).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from . import patterns as _patterns
from .counts import ChunkCounts, count, input_size
from .errors import TrainingError
from .progress import TrainProgress, enabled
from .reference import gini
from .render import PerToken, TableResult
from .tokenizer import Tokenizer

UNITS = ("bytes", "chars", "tokens")

LanguageData = Mapping[str, Any]


def _check_unit(unit: str) -> str:
    if unit not in UNITS:
        raise TrainingError(f"parity_unit must be one of {', '.join(UNITS)}, not {unit!r}")
    return unit


def _size(counts: ChunkCounts, unit: str) -> int:
    if unit == "tokens":
        return 1
    if unit == "bytes":
        return sum(len(c) * n for c, n in counts.items())
    return sum(len(c.decode("utf-8", "replace")) * n for c, n in counts.items())


def learn_parity(
    languages: LanguageData,
    vocab_size: int,
    *,
    dev: Optional[LanguageData] = None,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    name: str = "bytepair-parity",
    num_threads: Optional[int] = None,
    documents: Optional[str] = None,
    progress: Optional[bool] = None,
    parity_unit: str = "bytes",
    global_merges: int = 0,
) -> Tuple[Tokenizer, List[str]]:
    """Parity-aware training; returns the tokenizer and, per merge, the language
    that chose it. :func:`bytepair.train` with ``objective="parity"`` calls this.

    ``languages`` maps a language name to its training data (anything
    :func:`bytepair.train` takes); ``dev`` maps the same names to dev data
    (default: each language's training data is its own dev set).
    ``global_merges=N`` is the hybrid variant: the first N merges are standard
    BPE on all languages pooled (reported as chosen by ``"*"``), the rest
    parity-aware.

    >>> tok, chosen = learn_parity({"en": "the cat " * 40, "ko": "고양이 " * 10}, 262, pattern="gpt2")
    >>> chosen
    ['en', 'ko', 'ko', 'en', 'ko', 'en']
    """
    from .train import check_int, validate_specials

    unit = _check_unit(parity_unit)
    specials = validate_specials(special_tokens)
    if not isinstance(languages, Mapping) or not languages:
        raise TrainingError("languages must be a non-empty dict of language name -> training data")
    names = [str(k) for k in languages]
    if dev is None:
        dev = languages
    if not isinstance(dev, Mapping):
        raise TrainingError("dev must be a dict of language name -> dev data")
    unknown = [k for k in dev if k not in languages]
    if unknown:
        raise TrainingError(f"dev names language {unknown[0]!r}, which has no training data (languages: {', '.join(names)})")
    missing = [k for k in languages if k not in dev]
    if missing:
        raise TrainingError(f"language {missing[0]!r} has no dev data (give dev= for every language)")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError("vocab_size must be an int")
    if vocab_size < 256 + len(specials):
        raise TrainingError(f"vocab_size {vocab_size} is below 256 + {len(specials)} special tokens")
    min_frequency = check_int("min_frequency", min_frequency, minimum=0) or 1
    max_len = check_int("max_token_length", max_token_length, allow_none=True)
    global_merges = check_int("global_merges", global_merges, minimum=0) or 0
    pat = _patterns.resolve(pattern)
    total = sum(input_size(d) or 0 for d in languages.values())
    bars = TrainProgress(enabled(progress), total or None)
    kw: Dict[str, Any] = dict(pattern=pat, special_tokens=specials, num_threads=num_threads, documents=documents)
    try:
        tables, dev_tables, sizes = [], [], []
        for lang in languages:
            c = count(languages[lang], progress=bars, **kw)
            if len(c.table) == 0:
                raise TrainingError(f"the training text of language {lang!r} is empty")
            tables.append(c.table)
            d = count(dev[lang], **kw) if dev is not languages else c
            if len(d.table) == 0:
                raise TrainingError(f"the dev text of language {lang!r} is empty")
            dev_tables.append(d.table)
            sizes.append(_size(d, unit))
        num_merges = vocab_size - 256 - len(specials)
        merges, chooser = _core.parity_merges(tables, dev_tables, sizes, num_merges, min_frequency, max_len,
                                              bars.merging(num_merges), global_merges)
    finally:
        bars.close()
    if len(merges) < num_merges:
        warnings.warn(
            f"the corpora support only {len(merges)} merges; the vocab size is"
            f" {256 + len(merges) + len(specials)} instead of {vocab_size}",
            stacklevel=3,
        )
    tokens = [bytes([i]) for i in range(256)]
    for a, b in merges:
        tokens.append(tokens[a] + tokens[b])
    special_ids = {s: len(tokens) + i for i, s in enumerate(specials)}
    tok = Tokenizer(tokens, pat, special_ids, name=name, merges=merges)
    return tok, [names[i] if i < len(names) else "*" for i in chooser]


# ---------------------------------------------------------------- the report


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
        from .render import format_table

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
    if isinstance(value, os.PathLike):
        from .train import read_text_file

        return read_text_file(value)
    from .train import iter_documents

    return "\n\n".join(iter_documents(value))


def parity(
    tokenizers: Union[Mapping[str, Any], Sequence[Any]],
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
    from .inspect import count_tokens, resolve_tokenizer, tokenizer_name

    _check_unit(unit)
    if not isinstance(texts_by_language, Mapping) or not texts_by_language:
        raise ValueError("texts_by_language must be a non-empty dict of language -> text")
    texts = {str(k): _text_of(v) for k, v in texts_by_language.items()}
    for g, t in texts.items():
        if not t:
            raise ValueError(f"the text of language {g!r} is empty")
    if isinstance(tokenizers, Mapping):
        toks = {str(k): resolve_tokenizer(v) for k, v in tokenizers.items()}
    else:
        toks = {}
        for t in tokenizers:
            obj = resolve_tokenizer(t)
            label = t if isinstance(t, str) and not os.path.exists(t) else tokenizer_name(obj)
            while label in toks:
                label += "'"
            toks[label] = obj
    if not toks:
        raise ValueError("parity needs at least one tokenizer")
    rows = []
    for name, tok in toks.items():
        for g, text in texts.items():
            rows.append(ParityRow(name, g, count_tokens(tok, text), len(text.encode("utf-8")), len(text)))
    return ParityReport(list(toks), list(texts), rows, unit)


def plot_parity(report: ParityReport, path: Union[str, "os.PathLike[str]"], *, title: Optional[str] = None) -> None:
    """Draws each language's cost relative to the first, per tokenizer, as grouped
    bars labelled with the Gini coefficient, and writes the picture (needs matplotlib)."""
    from .plot import labels_and_font, new_figure, require_matplotlib, save_figure

    require_matplotlib()
    langs, toks = report.languages, report.tokenizers
    labels, font, _ = labels_and_font(langs)
    fig = new_figure(max(6.0, 1.5 + 0.9 * len(langs) * max(1, len(toks)) ** 0.5), 4.4)
    ax = fig.add_subplot()
    width = 0.8 / len(toks)
    for j, t in enumerate(toks):
        xs = [i + (j - (len(toks) - 1) / 2) * width for i in range(len(langs))]
        ys = [report.relative(t, g) for g in langs]
        ax.bar(xs, ys, width * 0.95, label=f"{t} (Gini {report.gini(t):.3f})")
    ax.axhline(1.0, color="black", linewidth=0.8, alpha=0.6)
    ax.set_xticks(range(len(langs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if font:
            from matplotlib.font_manager import FontProperties

            ax.set_xticklabels(labels, fontproperties=FontProperties(fname=font))
        else:
            ax.set_xticklabels(labels)
    unit = {"bytes": "tokens per byte", "chars": "tokens per character", "tokens": "tokens"}[report.unit]
    ax.set_ylabel(f"{unit}, relative to {langs[0]}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=9)
    ax.set_title(title or "Cost per language (lower is cheaper; 1.0 = the first language)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        save_figure(fig, path)


__all__ = ["UNITS", "ParityReport", "ParityRow", "learn_parity", "parity", "plot_parity"]
