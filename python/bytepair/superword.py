"""Superword tokenizers (SuperBPE): tokens that bridge spaces, such as `` of the``.

``bytepair.train(data, vocab_size, superword=T)`` trains in two stages.
Stage 1 is ordinary training with ``pattern`` up to the transition size
``T`` (256 bytes + merges; a float is a fraction of ``vocab_size``). Stage 2
continues from those merges on *spans*, chunks cut by
:data:`bytepair.patterns.SUPERWORD`: no cut at spaces, digits in groups of at
most three, a cut after every run of newlines and between ``:`` and a
following space. Each distinct span starts as its encoding by the stage-1
merges, then BPE goes on with the same rule (most frequent pair, ties to the
pair met first), passing over pairs whose token would hold more than
``max_words`` words (maximal runs of bytes other than the space) and pairs
whose bytes already are a token. :func:`bytepair.reference.train_superword`
is the readable specification; the core gives exactly its merges.

Spans are counted like any chunks (first-seen table, parallel ranges, spill
to disk past the memory limit, ``cache_dir``), so documents are never held
in memory; the stage-2 merge loop holds the distinct spans, which for prose
are close to the corpus size (lines rarely repeat). With ``cache_dir`` the
word and the span counts of each file are cached apart (the key holds the
pattern and the special tokens), so a stopped run resumes in either stage
without counting a cached file again. Both tables can also be counted
elsewhere, e.g. on many machines with :func:`bytepair.distributed.count_chunks`
(``pattern="superword"`` for the spans), and trained on with
``train(counts=words, span_counts=spans, vocab_size=..., superword=T)``: the
merges are those of training on the documents.

The result pre-tokenizes with the span pattern, so it is an ordinary
:class:`~bytepair.Tokenizer`: it encodes, saves, loads and exports like any.
"""

from __future__ import annotations

import collections.abc
from dataclasses import replace
from typing import Any, Callable, Dict, Optional, Sequence

from . import _core
from . import memory as _memory
from . import patterns as _patterns
from .checks import check_int, check_threads, validate_specials
from .counts import ChunkCounts, count_chunks_or_runs, input_size
from .documents import Inputs
from .errors import TrainingError
from .progress import TrainProgress, enabled
from .tokenizer import Tokenizer

DEFAULT_MAX_WORDS = 4


def transition_size(superword: float, vocab_size: int, n_specials: int = 0) -> int:
    """The stage-1 size: an int is a vocabulary size (256 bytes + merges), a
    float in (0, 1] a fraction of ``vocab_size`` (rounded down, at least 256).

    >>> transition_size(0.9, 65_536), transition_size(60_000, 65_536)
    (58982, 60000)
    """
    top = vocab_size - n_specials
    if isinstance(superword, bool) or not isinstance(superword, (int, float)):
        raise TrainingError(f"superword must be a vocabulary size (int) or a fraction (float), not {superword!r}",
                            argument="superword")
    if isinstance(superword, float):
        if not 0.0 < superword <= 1.0:
            raise TrainingError(f"superword as a fraction of vocab_size must be in (0, 1], got {superword!r}",
                                argument="superword")
        return max(256, min(top, int(superword * vocab_size)))
    if not 256 <= superword <= top:
        raise TrainingError(
            f"superword (the transition size) must be between 256 and {top:,} (vocab_size"
            f"{' minus the special tokens' if n_specials else ''}), got {superword:,}", argument="superword"
        )
    return superword


def _check_rereadable(data: Any) -> None:
    if isinstance(data, collections.abc.Iterator):
        raise TrainingError(
            "superword training reads the data twice (words, then spans): pass a str, paths, or a list,"
            " not a one-shot iterator or generator"
        )


def _check_counts(counts: Any, span_counts: Any, special_tokens: Sequence[str]) -> list:
    """The special tokens of a training on precounted tables (``special_tokens``,
    else the word counts' own), after checking that both tables are
    ChunkCounts, the spans counted with :data:`~bytepair.patterns.SUPERWORD`
    and both with those special tokens cut out."""
    for arg, value in (("counts", counts), ("span_counts", span_counts)):
        if not isinstance(value, ChunkCounts):
            raise TypeError(f"superword training on counts needs counts= (words) and span_counts= (spans), both "
                            f"ChunkCounts; {arg} is {type(value).__name__}")
    if span_counts.pattern != _patterns.SUPERWORD:
        made = _patterns.name_of(span_counts.pattern) or ("none" if span_counts.pattern is None else "a custom regex")
        raise TrainingError(f"span_counts were counted with the pattern {made}, not the span pattern: count them "
                            "with pattern='superword' (bytepair.patterns.SUPERWORD)", argument="span_counts")
    specials = validate_specials(special_tokens or counts.special_tokens)
    for arg, table in (("counts", counts), ("span_counts", span_counts)):
        if sorted(table.special_tokens) != sorted(specials):
            raise TrainingError(
                f"{arg} were counted with the special tokens {list(table.special_tokens)}, the training uses "
                f"{specials}: count both tables with the same special tokens", argument=arg)
    return specials


def train_superword(
    stage1: Callable[..., Tokenizer],
    data: Any,
    vocab_size: int,
    superword: float,
    *,
    max_words: Optional[int] = DEFAULT_MAX_WORDS,
    special_tokens: Sequence[str] = (),
    name: str = "bytepair",
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    counts: Optional[ChunkCounts] = None,
    span_counts: Optional[ChunkCounts] = None,
    **options: Any,
) -> Tokenizer:
    """Both stages. ``stage1`` is :func:`bytepair.train` (passed in, so this
    module does not import it); ``options`` are its other arguments
    (``pattern``, ``min_frequency``, ``max_token_length``, ``num_threads``).
    ``inputs`` reads the data in both stages; its ``memory_limit`` also
    bounds the stage-2 merge loop. Instead of ``data``: ``counts`` (the
    words, counted with stage 1's pattern) and ``span_counts`` (counted with
    :data:`~bytepair.patterns.SUPERWORD`), with the same special tokens."""
    inputs = inputs or Inputs()
    if data is not None:
        if counts is not None or span_counts is not None:
            raise TypeError("give either training data or counts= and span_counts=, not both")
        _check_rereadable(data)
        specials = list(special_tokens)
    elif counts is None and span_counts is None:
        raise TypeError("give training data, or counts= (words) and span_counts= (spans)")
    else:
        specials = _check_counts(counts, span_counts, special_tokens)
    t = transition_size(superword, vocab_size, len(specials))
    words = check_int("max_words", max_words, minimum=1, allow_none=True)
    base = stage1(data, t + len(specials), counts=counts, special_tokens=specials, name=name, progress=progress,
                  inputs=inputs, **options)
    first_id = 256 + len(base.merges)
    num_merges = vocab_size - first_id - len(specials)
    merges = list(base.merges)
    if num_merges > 0:
        source = data if span_counts is None else span_counts
        merges += stage2_merges(base, source, num_merges, words, specials, progress=progress, inputs=inputs,
                                **options)
    special_ids = {s: 256 + len(merges) + i for i, s in enumerate(specials)}
    pat = _patterns.SUPERWORD
    core = _core.CoreBPE.from_merges(merges, special_ids, pat)
    return Tokenizer._from_core(core, pat, special_ids, name=name, merges=merges)


def stage2_merges(
    base: Tokenizer,
    data: Any,
    num_merges: int,
    max_words: Optional[int],
    specials: Sequence[str],
    *,
    inputs: Inputs,
    pattern: Any = None,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
) -> list:
    """Stage 2: the spans of ``data`` counted (or ``data`` itself when it is
    the span counts), each encoded by ``base``'s merges, then up to
    ``num_merges`` merges with the word bound. Spans counted past the
    memory limit stay on disk as sorted runs, and the lean loop learns from
    them without a table (the same merges)."""
    del pattern  # stage 2 counts spans, whatever stage 1's pattern
    num_threads = check_threads(num_threads, TrainingError)  # clamped, as counting does
    limit = inputs.limit() or _memory.default_limit()
    given = isinstance(data, ChunkCounts)
    status = TrainProgress(enabled(progress), 0 if given else input_size(data))
    try:
        first_id = 256 + len(base.merges)
        if given:
            table = data.table
        else:
            got = count_chunks_or_runs(data, pattern=_patterns.SUPERWORD, special_tokens=specials,
                                       num_threads=num_threads, progress=status,
                                       inputs=replace(inputs, memory_limit=limit))
            # spans that did not fit in memory as counted stay on disk: the lean loop reads the runs
            table = got if isinstance(got, _core.SpilledRuns) else got.table
        # the core picks the loop: the node loop when its state fits the limit, else the lean loop
        # (the same merges in less memory), which refuses a limit it cannot keep either; a table
        # counted here is freed once its spans are encoded
        merges = _core.extend_merges(base._core, table, first_id, num_merges, min_frequency or 1,
                                     max_token_length, status.merging(num_merges), max_words=max_words,
                                     num_threads=num_threads, memory_limit=limit, consume=not given)
        status.merged(len(merges))
    finally:
        status.close()
    return list(merges)


def superword_tokens(tok: Tokenizer) -> Dict[int, bytes]:
    """The superwords of ``tok``: tokens holding two or more runs of
    non-whitespace bytes, so crossing the space between them (`` of the``,
    ``, and``, ``ing the``).

    >>> superword_tokens(Tokenizer([bytes([i]) for i in range(256)] + [b" of", b" of the", b"\\n\\n "], None))
    {257: b' of the'}
    """
    return {i: t for i, t in enumerate(tok.token_bytes_list) if t and len(t.split()) >= 2}
