"""``bytepair.train``: learn a byte-level BPE tokenizer from text.

Accepted data: a ``str`` (one document), an iterable of ``str`` (documents,
streamed in batches), or an ``os.PathLike`` / iterable of ``os.PathLike``
naming shards, mixed freely: UTF-8 text files (each file is one document,
counted in parallel ranges by the Rust core), Parquet files (one row is one
document, the string in ``text_column``), JSONL files (one object per line,
the string under ``text_field``), directories and globs (see
:mod:`bytepair.shards.paths`). Plain ``str`` values are always text, never paths.

The work runs in the Rust core (``bytepair._core``) with the GIL released:
parallel chunk counting, then the incremental merge loop. The result is
exactly that of :func:`bytepair.reference.train` (same merges, same ids).
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _core
from . import memory as _memory
from . import patterns as _patterns
from .checks import DEFAULT_MAX_TOKEN_LENGTH, check_int, check_vocab_size, validate_specials
from .counts import ChunkCounts, count_chunks, input_size
from .documents import Data, Inputs
from .errors import TrainingError
from .parity import train_parity
from .progress import TrainProgress, enabled
from .superword import DEFAULT_MAX_WORDS, train_superword
from .tokenizer import Tokenizer

#: The keywords of the parity spelling ``train(objective="parity", ...)`` (see
#: :func:`bytepair.parity.train_parity`, which takes them as its own arguments).
PARITY_OPTIONS = ("languages", "dev", "parity_unit", "parity_global_merges")


class _DefaultPattern(str):
    """The default ``pattern`` ("o200k"), told apart from an explicit "o200k" so
    that ``train(counts=...)`` can refuse a pattern that contradicts the counts'."""


DEFAULT_PATTERN = _DefaultPattern("o200k")


def _warn_if_path(data: object) -> None:
    """A str is always text; warn when it is also the name of an existing file."""
    if isinstance(data, str) and 0 < len(data) < 4096 and "\n" not in data:
        try:
            is_file = os.path.isfile(data)
        except (OSError, ValueError):
            is_file = False
        if is_file:
            warnings.warn(
                f"training on the str {data!r} as text, but it is also the name of a file; "
                f"to train on the file, pass pathlib.Path({data!r})",
                stacklevel=4,
            )


def _check_merge_memory(table: "_core.ChunkTable", num_merges: int, limit: int) -> str:
    """Refuses a merge loop that cannot fit ``limit``; returns the loop to
    run: ``"auto"`` (the compact loop, which hands over to the position loop
    when a long chunk makes its work pass its budget) when both loops fit,
    ``"compact"`` to the end when only the compact one does."""
    compact = table.merge_loop(num_merges) == "compact"
    args = (len(table), table.arena_len, num_merges)
    need = _memory.merge_loop_bytes(*args, compact=compact)
    if need > limit:
        raise TrainingError(
            f"the merge loop needs about {need / 1e6:,.0f} MB for {len(table):,} distinct chunks "
            f"({table.arena_len / 1e6:,.0f} MB of chunk bytes) and {num_merges:,} merges, more than "
            f"memory_limit ({limit / 1e6:,.0f} MB): raise the limit or train fewer merges",
            argument="memory_limit",
        )
    if compact and _memory.merge_loop_bytes(*args, compact=False) > limit:
        return "compact"
    return "auto"


@dataclass(frozen=True)
class Training:
    """What a training run made and measured: the result of :func:`train_report`.

    Attributes:
        tokenizer: the trained tokenizer (what :func:`train` returns).
        chunks: distinct chunks trained on.
        bytes: UTF-8 bytes of the text counted (special-token text cut out).
        tokens: tokens of that text under ``tokenizer`` (each distinct chunk
            encoded once, weighted by its count: the corpus is not read again).
        counting_seconds: time spent counting (0 when given ``counts``).
        merging_seconds: time spent learning merges and building the tokenizer.
        peak_memory: the process's peak resident memory in bytes, when the
            system reports it.
    """

    tokenizer: Tokenizer
    chunks: int
    bytes: int
    tokens: int
    counting_seconds: float
    merging_seconds: float
    peak_memory: Optional[int]

    @property
    def seconds(self) -> float:
        """Counting plus merging."""
        return self.counting_seconds + self.merging_seconds

    @property
    def bytes_per_token(self) -> float:
        """The trained tokenizer's compression of its own training text."""
        return self.bytes / max(self.tokens, 1)


@dataclass(frozen=True)
class _Job:
    """A training run's checked arguments."""

    specials: List[str]
    vocab_size: int
    num_merges: int
    min_frequency: int
    max_len: Optional[int]
    limit: int
    name: str
    num_threads: Optional[int]
    progress: Optional[bool]
    inputs: Inputs
    #: min_frequency and max_token_length as given (the warning names them, not their clamped values)
    given: Tuple[Any, Any] = (None, None)


def _check_objective(
    objective: str, parity: Dict[str, Any], data: object, counts: object, superword: object, span_counts: object
) -> None:
    """Refuses a training objective that does not match the arguments given with it."""
    if objective != "parity" and superword is None and span_counts is not None:
        raise TypeError("span_counts= is for superword training: give superword= too")
    if objective not in ("frequency", "parity"):
        raise TrainingError(f"objective must be 'frequency' or 'parity', not {objective!r}", argument="objective")
    if objective == "parity":
        if data is not None or counts is not None:
            raise TypeError("objective='parity' trains on languages={name: data, ...}, not on data or counts")
        if parity.get("languages") is None:
            raise TrainingError("objective='parity' needs languages={name: data, ...} (and dev= for each)",
                                argument="languages")
    elif parity:
        raise TypeError(f"{', '.join(k + '=' for k in parity)} are for objective='parity' "
                        "(or bytepair.parity.train_parity)")


def train(
    data: Optional[Data] = None,
    vocab_size: Optional[int] = None,
    *,
    counts: Optional[ChunkCounts] = None,
    pattern: Optional[str] = DEFAULT_PATTERN,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = DEFAULT_MAX_TOKEN_LENGTH,
    name: str = "bytepair",
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    objective: str = "frequency",
    superword: Optional[float] = None,
    max_words: Optional[int] = DEFAULT_MAX_WORDS,
    span_counts: Optional[ChunkCounts] = None,
    **options: Any,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer.

    Args:
        data: a str, a path, or an iterable of str / paths (see the module docstring).
        vocab_size: everything counted: 256 byte tokens + merges + special tokens.
        counts: instead of ``data``, a precounted :class:`~bytepair.counts.ChunkCounts` table (its
            pattern is used; its special tokens too unless ``special_tokens`` is given).
        pattern: pre-tokenization: ``"gpt2"``, ``"cl100k"``, ``"o200k"``, a regex, or ``None`` (each
            document is one chunk). With ``counts`` the counts' pattern is used, and a different
            ``pattern`` is an error.
        special_tokens: get the ids after the last merge, in the order given; their text is cut out of
            the corpus before counting, so merges never produce them.
        min_frequency: stop when the best pair occurs fewer times than this.
        max_token_length: skip pairs whose merged token would exceed this many bytes (default
            :data:`~bytepair.checks.DEFAULT_MAX_TOKEN_LENGTH`, 256; ``None``: no limit).
        name: the tokenizer's label.
        num_threads: counting threads (default: all cores). Results never depend on it.
        progress: show a progress line on stderr (bytes counted, then merges: rate, resident memory,
            time left; see :mod:`bytepair.progress`); default: only when stderr is a terminal.
        inputs: how ``data`` is read, a :class:`~bytepair.documents.Inputs`: ``text_column`` (Parquet),
            ``text_field`` (JSONL), ``documents`` (a separator splitting each document further),
            ``cache_dir`` (each file's counts saved as soon as counted and reused: a run stopped by
            Ctrl-C resumes where it stopped) and ``memory_limit`` (a size such as ``"2GB"`` or bytes
            bounding the trainer's data, default half the machine's memory: counting spills to disk past
            it with identical results, and when the merge loop alone would not fit, a TrainingError says
            how much it needs before merging starts). Each field can also be given here as a keyword of
            its own name.
        objective: ``"frequency"``: standard BPE, the most frequent pair of the whole corpus.
            ``"parity"`` with ``languages=``, ``dev=``, ``parity_unit=`` and ``parity_global_merges=``
            is another spelling of :func:`bytepair.parity.train_parity` (parity-aware BPE).
        superword: train a superword tokenizer (:mod:`bytepair.superword`): ordinary training up to this
            transition size (an int: 256 bytes + merges; a float: a fraction of ``vocab_size``), then
            merges across spaces on the spans of :data:`bytepair.patterns.SUPERWORD`, which the result
            pre-tokenizes with. Needs data that can be read twice.
        max_words: with ``superword``: the most words (maximal runs of bytes other than the space) a
            token may hold; None for no bound.
        span_counts: with ``superword`` and ``counts`` instead of ``data``: the same documents' span counts
            (``pattern="superword"``, the same special tokens; e.g. :func:`bytepair.distributed.count_chunks`);
            the merges equal those of training on the documents.

    A ``str`` is text, never a path (a warning says so when it names an existing file). Lone surrogates
    in str data are replaced by U+FFFD before counting, exactly as :meth:`Tokenizer.encode` treats them
    (tiktoken's rule).

    Ties between equally frequent pairs go to the pair met first (distinct chunks in first-seen order,
    pairs left to right). When the corpus cannot supply ``vocab_size`` tokens, training stops early with
    a warning that states the size reached. :func:`train_report` trains the same way and also returns
    the run's figures.

    >>> tok = train("banana bandana", 259, pattern=None)
    >>> tok.encode("banana")
    [257, 258]
    """
    parity = {k: options.pop(k) for k in PARITY_OPTIONS if k in options}
    _check_objective(objective, parity, data, counts, superword, span_counts)
    if objective == "parity":
        return train_parity(parity["languages"], vocab_size, dev=parity.get("dev"),  # type: ignore[arg-type]
                            parity_unit=parity.get("parity_unit", "bytes"), pattern=pattern,
                            global_merges=parity.get("parity_global_merges", 0), special_tokens=special_tokens,
                            min_frequency=min_frequency, max_token_length=max_token_length, name=name,
                            num_threads=num_threads, progress=progress, inputs=inputs, **options)
    if superword is not None:
        return train_superword(train, data, check_vocab_size(vocab_size), superword, max_words=max_words,
                               special_tokens=validate_specials(special_tokens), name=name, progress=progress,
                               inputs=Inputs.of(inputs, options, "train"), pattern=pattern, counts=counts,
                               span_counts=span_counts, min_frequency=min_frequency,
                               max_token_length=max_token_length, num_threads=num_threads)
    job, table_of = _prepare(data, vocab_size, counts, pattern, special_tokens, min_frequency, max_token_length,
                             name, num_threads, progress, Inputs.of(inputs, options, "train"))
    tok, _, _ = _learn(job, table_of, data, counts, keep=False)
    return tok


def train_report(
    data: Optional[Data] = None,
    vocab_size: Optional[int] = None,
    *,
    counts: Optional[ChunkCounts] = None,
    pattern: Optional[str] = DEFAULT_PATTERN,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = DEFAULT_MAX_TOKEN_LENGTH,
    name: str = "bytepair",
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> Training:
    """Trains as :func:`train` does (the same arguments, frequency objective)
    and returns the tokenizer with the run's figures, a :class:`Training`.

    The figures come from the chunk table, which is kept through the merge
    loop to measure them (``train`` frees a table it counted once the loop is
    built).

    >>> run = train_report("banana bandana", 259, pattern=None)
    >>> run.tokenizer.encode("banana"), run.chunks, run.bytes, run.tokens
    ([257, 258], 1, 14, 6)
    """
    job, table_of = _prepare(data, vocab_size, counts, pattern, special_tokens, min_frequency, max_token_length,
                             name, num_threads, progress, Inputs.of(inputs, options, "train_report"))
    tok, table, seconds = _learn(job, table_of, data, counts, keep=True)
    chunks = [(c.decode("utf-8", "replace"), n) for c, n in table.items()]
    n_bytes = sum(len(c) * n for c, n in table.items())
    ids = tok.encode_ordinary_batch([c for c, _ in chunks], num_threads=job.num_threads)
    n_tokens = sum(len(x) * n for x, (_, n) in zip(ids, chunks))
    return Training(tok, len(chunks), n_bytes, n_tokens, seconds[0], seconds[1], _memory.peak_rss())


def _prepare(data: Optional[Data], vocab_size: Optional[int], counts: Optional[ChunkCounts],
             pattern: Optional[str], special_tokens: Sequence[str], min_frequency: int,
             max_token_length: Optional[int], name: str, num_threads: Optional[int], progress: Optional[bool],
             inputs: Inputs) -> Tuple[_Job, Optional[str]]:
    """The checked job and the pattern to count ``data`` with (the counts' own with ``counts``)."""
    specials = validate_specials(special_tokens)
    if (data is None) == (counts is None):
        raise TypeError("give either training data or counts=, not both or neither")
    vocab_size = check_vocab_size(vocab_size)
    given = (min_frequency, max_token_length)  # the warning below names what the caller gave, not the clamp
    min_frequency = check_int("min_frequency", min_frequency, minimum=0) or 1
    max_len = check_int("max_token_length", max_token_length, allow_none=True)
    if counts is not None and not isinstance(counts, ChunkCounts):
        raise TypeError(f"counts must be a ChunkCounts, got {type(counts).__name__}")
    if counts is not None and pattern is not DEFAULT_PATTERN and _patterns.resolve(pattern) != counts.pattern:
        theirs = _patterns.name_of(counts.pattern) or counts.pattern
        raise TrainingError(
            f"pattern={pattern!r} differs from the pattern the counts were made with ({theirs!r}); "
            "counts fix the pre-tokenization: drop pattern= or count again with it", argument="pattern"
        )
    if data is not None:
        _warn_if_path(data)
    if counts is not None and not special_tokens:
        specials = validate_specials(counts.special_tokens)
    if vocab_size < 256 + len(specials):
        raise TrainingError(
            f"vocab_size {vocab_size} is too small: it must be at least 256 (one token per byte)"
            f" + {len(specials)} special tokens = {256 + len(specials)}", argument="vocab_size"
        )
    limit = inputs.limit() or _memory.default_limit()
    job = _Job(specials, vocab_size, vocab_size - 256 - len(specials), min_frequency, max_len, limit, name,
               num_threads, progress, replace(inputs, memory_limit=limit), given)
    if counts is not None:
        _check_merge_memory(counts.table, job.num_merges, limit)
        return job, counts.pattern
    return job, _patterns.resolve(pattern)


def _learn(job: _Job, pattern: Optional[str], data: Optional[Data], counts: Optional[ChunkCounts],
           keep: bool) -> Tuple[Tokenizer, ChunkCounts, Tuple[float, float]]:
    """Counts ``data`` (unless given ``counts``), learns the merges and builds the
    tokenizer; returns it, the chunk table (emptied unless ``keep`` or given)
    and the seconds spent counting and merging."""
    show = enabled(job.progress)  # the total only for a line that shows it (it lists every folder)
    status = TrainProgress(show, input_size(data) if show and data is not None else None)
    t0 = time.perf_counter()
    try:
        if counts is None:
            assert data is not None  # checked: exactly one of data / counts
            counts = count_chunks(data, pattern=pattern, special_tokens=job.specials, num_threads=job.num_threads,
                                  progress=status, inputs=job.inputs)
            consume = not keep
            t1 = time.perf_counter()
        else:
            consume = False  # never the caller's counts
            t1 = t0
        if len(counts) == 0:
            raise TrainingError("the training corpus is empty (no text left after removing special tokens)")
        merge_loop = _check_merge_memory(counts.table, job.num_merges, job.limit)
        # a table counted here is freed once the merge loop is built
        merges = _core.learn_merges(counts.table, job.num_merges, job.min_frequency, job.max_len,
                                    status.merging(job.num_merges), consume=consume, merge_loop=merge_loop)
        status.merged(len(merges))
    finally:
        status.close()
    if len(merges) < job.num_merges:
        warnings.warn(
            f"the corpus supports only {len(merges)} merges (min_frequency={job.given[0]}"
            f"{'' if job.max_len is None else f', max_token_length={job.given[1]}'}); the vocab size is"
            f" {256 + len(merges) + len(job.specials)} instead of {job.vocab_size}",
            stacklevel=3,
        )
    special_ids = {s: 256 + len(merges) + i for i, s in enumerate(job.specials)}
    core = _core.CoreBPE.from_merges(merges, special_ids, pattern)
    tok = Tokenizer._from_core(core, pattern, special_ids, name=job.name, merges=merges)
    return tok, counts, (t1 - t0, time.perf_counter() - t1)


__all__ = ["DEFAULT_PATTERN", "PARITY_OPTIONS", "Training", "train", "train_report"]
