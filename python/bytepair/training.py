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
import warnings
from typing import Mapping, Optional, Sequence, Union

from . import _core
from . import memory as _memory
from . import patterns as _patterns
from .checks import DEFAULT_MAX_TOKEN_LENGTH, check_int, check_vocab_size, validate_specials
from .counts import ChunkCounts, count_chunks, input_size
from .documents import Data
from .errors import TrainingError
from .parity import learn_parity
from .progress import TrainProgress, enabled
from .tokenizer import Tokenizer


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
                stacklevel=3,
            )


def counting_share(limit: int, num_threads: Optional[int]) -> int:
    """The counting tables' part of the limit: what is left after each
    thread's read buffer (9 MiB) and 16 MB for everything else, at least 4 MB."""
    threads = num_threads or os.cpu_count() or 1
    return max(4 << 20, limit - threads * (9 << 20) - 16_000_000)


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
            f"memory_limit ({limit / 1e6:,.0f} MB): raise the limit or train fewer merges"
        )
    if compact and _memory.merge_loop_bytes(*args, compact=False) > limit:
        return "compact"
    return "auto"


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
    documents: Optional[str] = None,
    progress: Optional[bool] = None,
    objective: str = "frequency",
    languages: Optional[Mapping[str, Data]] = None,
    dev: Optional[Mapping[str, Data]] = None,
    parity_unit: str = "bytes",
    parity_global_merges: int = 0,
    text_column: str = "text",
    text_field: str = "text",
    memory_limit: Union[int, str, None] = None,
    cache_dir: Union[str, "os.PathLike[str]", None] = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer.

    Args:
        data: a str, a path, or an iterable of str / paths (see the module docstring).
        vocab_size: everything counted: 256 byte tokens + merges + special tokens.
        counts: instead of ``data``, a precounted :class:`~bytepair.counts.ChunkCounts`
            table (its pattern is used; its special tokens too unless
            ``special_tokens`` is given).
        pattern: pre-tokenization: ``"gpt2"``, ``"cl100k"``, ``"o200k"``, a regex,
            or ``None`` (each document is one chunk). With ``counts`` the counts'
            pattern is used, and a different ``pattern`` is an error.
        special_tokens: get the ids after the last merge, in the order given;
            their text is cut out of the corpus before counting, so merges never
            produce them.
        min_frequency: stop when the best pair occurs fewer times than this.
        max_token_length: skip pairs whose merged token would exceed this many
            bytes (default :data:`~bytepair.checks.DEFAULT_MAX_TOKEN_LENGTH`,
            256; ``None``: no limit).
        name: the tokenizer's label.
        num_threads: counting threads (default: all cores). Results never depend on it.
        documents: a separator (e.g. ``"\\n\\n"``): each document is further
            split at it and the separator dropped, so with ``pattern=None`` each
            such document is its own chunk.
        progress: show a progress line on stderr (bytes counted, then merges:
            rate, resident memory, time left; see :mod:`bytepair.progress`);
            default: only when stderr is a terminal.
        objective: ``"frequency"`` (standard BPE: the most frequent pair of the
            whole corpus) or ``"parity"`` (parity-aware BPE: the language whose
            dev text is currently most expensive chooses each merge; see
            :mod:`bytepair.parity`). Parity needs ``languages`` instead of ``data``.
        languages: for ``objective="parity"``: language name -> training data.
        dev: for ``objective="parity"``: language name -> dev data, one per
            language (default: each language's training data).
        parity_unit: how a dev text's cost is measured: tokens per ``"bytes"``,
            per ``"chars"``, or raw ``"tokens"`` (parallel dev texts).
        parity_global_merges: the hybrid variant: the first N merges are
            standard BPE on all languages pooled, the rest parity-aware.
        text_column: the string column of Parquet shards.
        text_field: the key of the text in JSONL shards.
        memory_limit: a size (``"2GB"``, ``"512MiB"``) or bytes bounding the
            trainer's data (default: half the machine's memory). Counting
            spills to disk past it, with identical results; when the merge
            loop alone would not fit, a TrainingError says how much it needs
            before merging starts. See :mod:`bytepair.memory`.
        cache_dir: a folder where each file's counts are saved as soon as it is
            counted (keyed by its content hash, the pattern and the special
            tokens) and reused, so a run stopped by Ctrl-C while counting
            resumes where it stopped (see :func:`bytepair.counts.count_chunks`).

    A ``str`` is text, never a path (a warning says so when it names an existing
    file). Lone surrogates in str data are replaced by U+FFFD before counting,
    exactly as :meth:`Tokenizer.encode` treats them (tiktoken's rule).

    Ties between equally frequent pairs go to the pair met first (distinct
    chunks in first-seen order, pairs left to right). When the corpus cannot
    supply ``vocab_size`` tokens, training stops early with a warning that
    states the size reached.

    >>> tok = train("banana bandana", 259, pattern=None)
    >>> tok.encode("banana")
    [257, 258]
    """
    if objective not in ("frequency", "parity"):
        raise TrainingError(f"objective must be 'frequency' or 'parity', not {objective!r}")
    if objective == "parity":
        if data is not None or counts is not None:
            raise TypeError("objective='parity' trains on languages={name: data, ...}, not on data or counts")
        if languages is None:
            raise TrainingError("objective='parity' needs languages={name: data, ...} (and dev= for each)")

        vocab_size = check_vocab_size(vocab_size)
        tok, _ = learn_parity(languages, vocab_size, dev=dev, pattern=pattern, special_tokens=special_tokens,
                              min_frequency=min_frequency, max_token_length=max_token_length,
                              name=name, num_threads=num_threads, documents=documents, progress=progress,
                              parity_unit=parity_unit, global_merges=parity_global_merges)
        return tok
    if languages is not None or dev is not None:
        raise TypeError("languages= and dev= are for objective='parity'")
    specials = validate_specials(special_tokens)
    if (data is None) == (counts is None):
        raise TypeError("give either training data or counts=, not both or neither")
    vocab_size = check_vocab_size(vocab_size)
    min_frequency = check_int("min_frequency", min_frequency, minimum=0) or 1
    max_len = check_int("max_token_length", max_token_length, allow_none=True)
    if counts is not None and not isinstance(counts, ChunkCounts):
        raise TypeError(f"counts must be a ChunkCounts, got {type(counts).__name__}")
    if counts is not None and pattern is not DEFAULT_PATTERN and _patterns.resolve(pattern) != counts.pattern:
        theirs = _patterns.name_of(counts.pattern) or counts.pattern
        raise TrainingError(
            f"pattern={pattern!r} differs from the pattern the counts were made with ({theirs!r}); "
            "counts fix the pre-tokenization: drop pattern= or count again with it"
        )
    if data is not None:
        _warn_if_path(data)
    if counts is not None and not special_tokens:
        specials = validate_specials(counts.special_tokens)
    if vocab_size < 256 + len(specials):
        raise TrainingError(
            f"vocab_size {vocab_size} is too small: it must be at least 256 (one token per byte)"
            f" + {len(specials)} special tokens = {256 + len(specials)}"
        )
    limit = _memory.default_limit() if memory_limit is None else _memory.parse_size(memory_limit)
    num_merges = vocab_size - 256 - len(specials)
    if counts is not None:
        _check_merge_memory(counts.table, num_merges, limit)
    status = TrainProgress(enabled(progress), input_size(data) if data is not None else None)
    try:
        if counts is not None:
            pat = counts.pattern
            table = counts.table
        else:
            assert data is not None  # checked above: exactly one of data / counts
            pat = _patterns.resolve(pattern)
            table = count_chunks(data, pattern=pat, special_tokens=specials, num_threads=num_threads,
                          documents=documents, progress=status, text_column=text_column,
                          text_field=text_field, memory_limit=counting_share(limit, num_threads),
                          cache_dir=cache_dir).table
        if len(table) == 0:
            raise TrainingError("the training corpus is empty (no text left after removing special tokens)")
        merge_loop = _check_merge_memory(table, num_merges, limit)
        # a table counted here is freed once the merge loop is built (never the caller's counts)
        merges = _core.learn_merges(table, num_merges, min_frequency, max_len, status.merging(num_merges),
                                    consume=counts is None, merge_loop=merge_loop)
        status.merged(len(merges))
    finally:
        status.close()
    if len(merges) < num_merges:
        warnings.warn(
            f"the corpus supports only {len(merges)} merges (min_frequency={min_frequency}"
            f"{'' if max_len is None else f', max_token_length={max_len}'}); the vocab size is"
            f" {256 + len(merges) + len(specials)} instead of {vocab_size}",
            stacklevel=2,
        )
    special_ids = {s: 256 + len(merges) + i for i, s in enumerate(specials)}
    core = _core.CoreBPE.from_merges(merges, special_ids, pat)
    return Tokenizer.from_core(core, pat, special_ids, name=name, merges=merges)
