"""Fairness across languages: parity-aware training.

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

:func:`train_parity` trains this way (:func:`learn_parity` also says which
language chose each merge). The parity *report*, which measures tokenizers side by side on texts by
language, is a tool: :func:`bytepair.inspect.parity`.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from . import _core
from . import patterns as _patterns
from .checks import DEFAULT_MAX_TOKEN_LENGTH, check_int, check_vocab_size, validate_specials
from .counts import ChunkCounts, count_chunks, input_size
from .documents import Inputs
from .errors import TrainingError
from .progress import TrainProgress, enabled
from .tokenizer import Tokenizer

UNITS = ("bytes", "chars", "tokens")

LanguageData = Mapping[str, Any]


def check_unit(unit: str) -> str:
    """``unit`` when it is one of :data:`UNITS`, else a TrainingError."""
    if unit not in UNITS:
        raise TrainingError(f"parity_unit must be one of {', '.join(UNITS)}, not {unit!r}", argument="parity_unit")
    return unit


def _size(counts: ChunkCounts, unit: str) -> int:
    if unit == "tokens":
        return 1
    if unit == "bytes":
        return sum(len(c) * n for c, n in counts.items())
    return sum(len(c.decode("utf-8", "replace")) * n for c, n in counts.items())


def train_parity(
    languages: LanguageData,
    vocab_size: Optional[int],
    *,
    dev: Optional[LanguageData] = None,
    parity_unit: str = "bytes",
    global_merges: int = 0,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = DEFAULT_MAX_TOKEN_LENGTH,
    name: str = "bytepair-parity",
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> Tokenizer:
    """Trains a tokenizer with parity-aware BPE.

    Args:
        languages: language name -> training data (anything :func:`bytepair.train` takes).
        vocab_size: 256 byte tokens + merges + special tokens.
        dev: language name -> dev data, one per language, where costs are
            measured (default: each language's training data).
        parity_unit: how a dev text's cost is measured: tokens per ``"bytes"``,
            per ``"chars"``, or raw ``"tokens"`` (parallel dev texts).
        global_merges: the hybrid variant: the first N merges are standard BPE
            on all languages pooled, the rest parity-aware.
        pattern, special_tokens, min_frequency, max_token_length, name,
        num_threads, progress, inputs: as for :func:`bytepair.train` (the
        fields of ``inputs`` can be given as keywords too).

    ``bytepair.train(objective="parity", languages=..., dev=..., parity_unit=...,
    parity_global_merges=...)`` is another spelling of this call.
    :func:`learn_parity` also returns which language chose each merge.

    >>> tok = train_parity({"en": "the cat " * 40, "ko": "고양이 " * 10}, 262, pattern="gpt2")
    >>> tok.n_vocab
    262
    """
    return learn_parity(languages, vocab_size, dev=dev, parity_unit=parity_unit, global_merges=global_merges,
                        pattern=pattern, special_tokens=special_tokens, min_frequency=min_frequency,
                        max_token_length=max_token_length, name=name, num_threads=num_threads, progress=progress,
                        inputs=inputs, **options)[0]


def learn_parity(
    languages: LanguageData,
    vocab_size: Optional[int],
    *,
    dev: Optional[LanguageData] = None,
    parity_unit: str = "bytes",
    global_merges: int = 0,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    name: str = "bytepair-parity",
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> Tuple[Tokenizer, List[str]]:
    """Parity-aware training as :func:`train_parity` (the same arguments);
    returns the tokenizer and, per merge, the language that chose it
    (``"*"``: a pooled merge of the hybrid variant).

    >>> tok, chosen = learn_parity({"en": "the cat " * 40, "ko": "고양이 " * 10}, 262, pattern="gpt2")
    >>> chosen
    ['en', 'ko', 'ko', 'en', 'ko', 'en']
    """
    read = Inputs.of(inputs, options, "learn_parity")
    unit = check_unit(parity_unit)
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
    vocab_size = check_vocab_size(vocab_size)
    if vocab_size < 256 + len(specials):
        raise TrainingError(f"vocab_size {vocab_size} is below 256 + {len(specials)} special tokens")
    min_frequency = check_int("min_frequency", min_frequency, minimum=0) or 1
    max_len = check_int("max_token_length", max_token_length, allow_none=True)
    global_merges = check_int("global_merges", global_merges, minimum=0) or 0
    pat = _patterns.resolve(pattern)
    total = sum(input_size(d) or 0 for d in languages.values())
    status = TrainProgress(enabled(progress), total or None)
    kw: Dict[str, Any] = dict(pattern=pat, special_tokens=specials, num_threads=num_threads, inputs=read)
    try:
        tables, dev_tables, sizes = [], [], []
        for lang in languages:
            c = count_chunks(languages[lang], progress=status, **kw)
            if len(c.table) == 0:
                raise TrainingError(f"the training text of language {lang!r} is empty")
            tables.append(c.table)
            d = count_chunks(dev[lang], **kw) if dev is not languages else c
            if len(d.table) == 0:
                raise TrainingError(f"the dev text of language {lang!r} is empty")
            dev_tables.append(d.table)
            sizes.append(_size(d, unit))
        num_merges = vocab_size - 256 - len(specials)
        merges, chooser = _core.parity_merges(tables, dev_tables, sizes, num_merges, min_frequency, max_len,
                                              status.merging(num_merges), global_merges)
        status.merged(len(merges))
    finally:
        status.close()
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


__all__ = ["UNITS", "check_unit", "learn_parity", "train_parity"]
