"""``bytepair.extend``: grow an existing tokenizer with merges learned on new text.

Every token of the base keeps its bytes and its id, and so does every special
token; the new tokens come after the base's ids, so a model's embedding table
only needs rows appended. Where the base's special tokens sit above its
mergeable ranks (gpt2: 50256; cl100k_base: 100256-100276; o200k_base:
199998-200018), the new tokens start at ``base.n_vocab``, after the specials,
and the ids in between that hold no mergeable token stay *gaps*
(:attr:`Tokenizer.gaps`): the special tokens keep theirs, unused ids stay
unused. ``extended.truncate(base.n_vocab)`` returns ``(tokenizer, id_map)``
whose tokenizer equals the base: ``extended.truncate(base.n_vocab)[0] == base``.

How it learns: each distinct chunk of the new corpus (pre-tokenized with the
base's pattern) starts as its encoding by the base, then BPE continues with
bytepair's rule: merge the most frequent adjacent pair (ties: the pair met
first), everywhere, repeatedly. A pair whose joined bytes already are a token
is passed over. :func:`bytepair.reference.extend_from_counts` is the readable
specification; the Rust core gives exactly its merges.

Consequences (each one a test):

* extending a tokenizer trained to ``k`` merges on corpus ``C`` with ``C``
  itself by ``n`` merges gives the tokenizer trained to ``k + n`` merges;
* a text in which no new merge applies encodes identically under the base and
  the extended tokenizer (every extended token is a run of base tokens).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import replace
from typing import Any, List, Optional, Sequence, Union

from . import _core
from . import memory as _memory
from . import patterns as _patterns
from .char import CharTokenizer
from .checks import DEFAULT_MAX_TOKEN_LENGTH, MAX_VOCAB, check_int, check_threads, check_vocab_size, validate_specials
from .counts import ChunkCounts, count_chunks, input_size
from .documents import Data, Inputs
from .errors import TrainingError, VocabError
from .formats import load
from .progress import TrainProgress, enabled
from .registry import get_encoding, list_encoding_names
from .tokenizer import Tokenizer
from .vocab import as_gaps, check_gaps

Base = Union[Tokenizer, str, "os.PathLike[str]"]


def _resolve_base(base: object) -> Tokenizer:
    """A :class:`Tokenizer` from a tokenizer, a bundled encoding name or a file.

    Raises TrainingError for a character-level tokenizer (its ids are characters,
    not byte-level BPE ranks) and for anything else that is not byte-level BPE.
    """
    if isinstance(base, str) and not os.path.exists(base):
        if base not in list_encoding_names():
            raise TrainingError(
                f"base {base!r} is neither a bundled encoding ({', '.join(list_encoding_names())}) nor a file"
            )
        return get_encoding(base)
    if isinstance(base, (str, os.PathLike)):
        base = load(base)
    if isinstance(base, CharTokenizer):
        raise TrainingError(
            "the base is a character-level tokenizer (ids are characters, with id 0 for unknown ones), "
            "not byte-level BPE; extend works on byte-level BPE tokenizers (bytepair.train, bundled "
            "encodings, tokenizer files)"
        )
    if not isinstance(base, Tokenizer):
        raise TrainingError(f"base must be a Tokenizer, a bundled encoding name or a file, not {type(base).__name__}")
    return base


def _num_merges(first_id: int, vocab_size: Optional[int], add: Optional[int], n_specials: int) -> int:
    """How many merges to learn: ``add``, or what ``vocab_size`` leaves after the base and new specials."""
    if add is not None:
        if not isinstance(add, int) or isinstance(add, bool) or add < 1:
            raise TrainingError(f"add must be an int >= 1, got {add!r}", argument="add")
        top = MAX_VOCAB - first_id - n_specials
        if add > top:
            raise TrainingError(f"add must be between 1 and {top:,} (ids are 32-bit; the base has {first_id:,}), "
                                f"got {add:,}", argument="add")
        return add
    vocab_size = check_vocab_size(vocab_size)
    num_merges = vocab_size - first_id - n_specials
    if num_merges < 1:
        raise TrainingError(
            f"vocab_size {vocab_size} leaves no room for new merges: the base has {first_id:,} ids"
            f"{f' and {n_specials} new special tokens take the next ones' if n_specials else ''}; "
            f"give at least {first_id + n_specials + 1} (or add=N)", argument="vocab_size"
        )
    return num_merges


def _check_room(tok: Tokenizer, num_merges: int) -> None:
    """New tokens take the ids after the base's largest (special ids included): refused before any
    work when the unused ids below them exceed the vocabulary rule (:func:`bytepair.vocab.check_gaps`)."""
    n_tokens = sum(1 for t in tok.token_bytes_list if t) + num_merges
    top = tok.n_vocab - 1
    holder = next((f"the base's special token {s!r}" for s, i in tok.special_tokens.items() if i == top),
                  "the base")
    try:
        check_gaps(n_tokens, tok.n_vocab + num_merges, top, holder)
    except VocabError as e:
        raise TrainingError(f"cannot extend: new tokens take the ids after the base's largest; {e}",
                            argument="base") from None


def _table(tok: Tokenizer, data: Optional[Data], counts: Optional[ChunkCounts], read: Inputs, cut: List[str],
           num_threads: Optional[int], status: TrainProgress, limit: int) -> Any:
    """The chunk table to extend with: ``counts``' (checked against the base's
    pattern), or ``data`` counted with the base's pattern under ``limit`` bytes, ``cut`` removed."""
    if counts is not None:
        if not isinstance(counts, ChunkCounts):
            raise TypeError(f"counts must be a ChunkCounts, got {type(counts).__name__}")
        if counts.pattern != tok.pattern:
            raise TrainingError("counts were made with another pattern than the base's")
        return counts.table
    assert data is not None  # checked by the caller: exactly one of data / counts
    return count_chunks(data, pattern=tok.pattern, special_tokens=cut, num_threads=num_threads,
                        progress=status, inputs=replace(read, memory_limit=limit)).table


def _check_arguments(tok: Tokenizer, specials: Sequence[str], no_data: bool, no_counts: bool, no_size: bool,
                     no_add: bool) -> None:
    """New special tokens the base does not have; exactly one of data / counts= and of vocab_size / add=."""
    clash = [s for s in specials if s in tok.special_tokens]
    if clash:
        raise TrainingError(f"special token {clash[0]!r} is already a special token of the base")
    if no_data == no_counts:
        raise TypeError("give either training data or counts=, not both or neither")
    if no_size == no_add:
        raise TypeError("give either vocab_size or add=, not both or neither")


def extend(
    base: Base,
    data: Optional[Data] = None,
    vocab_size: Optional[int] = None,
    *,
    add: Optional[int] = None,
    counts: Optional[ChunkCounts] = None,
    pattern: Optional[str] = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = DEFAULT_MAX_TOKEN_LENGTH,
    name: Optional[str] = None,
    num_threads: Optional[int] = None,
    progress: Optional[bool] = None,
    inputs: Optional[Inputs] = None,
    **options: Any,
) -> Tokenizer:
    """Adds merges learned on ``data`` to ``base``, keeping every base id.

    Args:
        base: a :class:`Tokenizer`, a bundled encoding name (``"o200k_base"``) or
            a tokenizer file. Not a character-level tokenizer.
        data: the new corpus, as for :func:`bytepair.train` (str, paths, iterables).
        vocab_size: the size to reach (``n_vocab`` of the result, new special
            tokens included); must be above ``base.n_vocab``. Or give ``add``.
        add: how many merges to add (instead of ``vocab_size``).
        counts: instead of ``data``, a :class:`~bytepair.counts.ChunkCounts`
            counted with the base's pattern.
        pattern: must be the base's (the default); another pattern would split
            text differently and change the base's own ids on it.
        special_tokens: new special tokens, given the ids after the new merges.
            The base's specials are kept, and their text is cut out of the corpus.
        min_frequency, max_token_length, num_threads, progress: as for
            :func:`bytepair.train`.
        inputs: how ``data`` is read, as for :func:`bytepair.train` (a
            :class:`~bytepair.documents.Inputs`, or its fields as keywords:
            ``text_column``, ``text_field``, ``documents``, ``cache_dir``,
            ``memory_limit``).
        name: the result's name (default: ``"<base name>+<merges>"``).

    When the corpus supports fewer merges, it stops early with a warning.

    >>> import bytepair
    >>> ext = extend("gpt2", "안녕하세요 " * 20, add=3)
    >>> ext.n_vocab, len(ext.encode(" 안녕하세요")), len(bytepair.get_encoding("gpt2").encode(" 안녕하세요"))
    (50260, 11, 14)
    >>> ext.truncate(50257)[0] == bytepair.get_encoding("gpt2")
    True
    """
    read = Inputs.of(inputs, options, "extend")
    tok = _resolve_base(base)
    specials = validate_specials(special_tokens)
    _check_arguments(tok, specials, data is None, counts is None, vocab_size is None, add is None)
    first_id = tok.n_vocab
    num_merges = _num_merges(first_id, vocab_size, add, len(specials))
    _check_room(tok, num_merges)
    if pattern is not None and _patterns.resolve(pattern) != tok.pattern:
        raise TrainingError(
            "pattern must be the base's pre-tokenization pattern (leave it out): another pattern would "
            "split text differently and change the base's own ids on it"
        )
    min_frequency = check_int("min_frequency", min_frequency, minimum=0) or 1
    num_threads = check_threads(num_threads, TrainingError)  # clamped, as counting does
    max_len = check_int("max_token_length", max_token_length, allow_none=True)
    cut = list(tok.special_tokens) + specials
    status = TrainProgress(enabled(progress), input_size(data) if data is not None else None)
    limit = read.limit() or _memory.default_limit()
    try:
        table = _table(tok, data, counts, read, cut, num_threads, status, limit)
        if len(table) == 0:
            raise TrainingError("the corpus to extend with is empty (no text left after removing special tokens)")
        # the loop's state is checked against the limit once the chunks are encoded; a table counted
        # here is freed then (the caller's counts never)
        new_merges = _core.extend_merges(tok._core, table, first_id, num_merges, min_frequency, max_len,
                                         status.merging(num_merges), num_threads=num_threads,
                                         memory_limit=limit, consume=counts is None)
        status.merged(len(new_merges))
    finally:
        status.close()
    if len(new_merges) < num_merges:
        warnings.warn(
            f"the corpus supports only {len(new_merges)} new merges (min_frequency={min_frequency}); the vocab"
            f" size is {first_id + len(new_merges) + len(specials)} instead of {first_id + num_merges + len(specials)}",
            stacklevel=2,
        )
    return _grown(tok, new_merges, specials, name=name)


def _grown(tok: Tokenizer, new_merges: Sequence[tuple], specials: Sequence[str] = (), *,
          name: Optional[str] = None) -> Tokenizer:
    """The tokenizer ``tok`` plus tokens made by ``new_merges`` (pairs of ids,
    the k-th making id ``tok.n_vocab + k``) and new special tokens after them."""
    first_id = tok.n_vocab
    tokens: list = as_gaps(tok.token_bytes_list, tok._empty_ranks)
    tokens += [None] * (first_id - len(tokens))
    by_id = {i: t for i, t in enumerate(tokens) if t}
    for k, (a, b) in enumerate(new_merges):
        by_id[first_id + k] = by_id[a] + by_id[b]
        tokens.append(by_id[first_id + k])
    special_ids = tok.special_tokens
    for i, s in enumerate(specials):
        special_ids[s] = len(tokens) + i
    merges = tok.merges + [tuple(m) for m in new_merges]
    label = name if name is not None else f"{tok.name}+{len(new_merges)}"
    return Tokenizer(tokens, tok.pattern, special_ids, name=label, merges=merges, special_text=tok.special_text)
