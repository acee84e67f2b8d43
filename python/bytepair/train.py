"""``bytepair.train``: learn a byte-level BPE tokenizer from text.

Accepted data: a ``str`` (one document), an iterable of ``str`` (documents), or
an ``os.PathLike`` / list of ``os.PathLike`` naming UTF-8 text files (each file
is one document). Plain ``str`` values are always text, never paths.
"""

from __future__ import annotations

import os
import warnings
from typing import Iterable, Iterator, List, Optional, Sequence, Union

from . import patterns as _patterns
from . import reference
from .counts import ChunkCounts
from .encoding import Tokenizer
from .errors import TrainingError

Data = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]


def _validate_specials(special_tokens: Sequence[str]) -> List[str]:
    if isinstance(special_tokens, str):
        raise TrainingError("special_tokens must be a list of str, not a single str")
    out: List[str] = []
    for s in special_tokens:
        if not isinstance(s, str):
            raise TrainingError(f"special token {s!r} is not a str")
        if not s:
            raise TrainingError("a special token is the empty string")
        if s in out:
            raise TrainingError(f"special token {s!r} is listed twice")
        out.append(s)
    return out


def read_text_file(path: "os.PathLike[str] | str") -> str:
    """Reads a UTF-8 file; a file that is not UTF-8 raises TrainingError naming it."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TrainingError(f"{os.fspath(path)}: not UTF-8 text (byte {e.start}: {e.reason})") from e


def iter_documents(data: Data) -> Iterator[str]:
    """Yields the documents of ``data`` (see the module docstring)."""
    if isinstance(data, str):
        yield data
        return
    if isinstance(data, os.PathLike):
        yield read_text_file(data)
        return
    if isinstance(data, (bytes, bytearray)):
        raise TypeError("training data must be str, not bytes; decode it first")
    for item in data:
        if isinstance(item, str):
            yield item
        elif isinstance(item, os.PathLike):
            yield read_text_file(item)
        else:
            raise TypeError(f"training data items must be str or paths, got {type(item).__name__}")


def train(
    data: Optional[Data] = None,
    vocab_size: Optional[int] = None,
    *,
    counts: Optional["ChunkCounts"] = None,
    pattern: Optional[str] = "o200k",
    special_tokens: Sequence[str] = (),
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    name: str = "bytepair",
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer.

    ``vocab_size`` counts everything: 256 byte tokens + merges + special tokens.
    Special tokens get the ids after the last merge, in the order given; their
    text in the corpus is cut out before counting, so merges never produce them.
    Instead of ``data``, a precounted :class:`~bytepair.counts.ChunkCounts` table
    can be given as ``counts=`` (its pattern is used).

    >>> tok = train("banana bandana", 259, pattern=None)
    >>> tok.encode("banana")
    [257, 258]
    """
    specials = _validate_specials(special_tokens)
    if (data is None) == (counts is None):
        raise TypeError("give either training data or counts=, not both or neither")
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise TypeError("vocab_size must be an int")
    if vocab_size < 256 + len(specials):
        raise TrainingError(
            f"vocab_size {vocab_size} is too small: it must be at least 256 (one token per byte)"
            f" + {len(specials)} special tokens = {256 + len(specials)}"
        )
    pat = _patterns.resolve(pattern)
    try:
        reference.compile_pattern(pat)
    except Exception as e:  # regex.error
        from .errors import PatternError

        raise PatternError(f"invalid pre-tokenization pattern {pattern!r}: {e}") from e
    if pat is not None:
        # The core's regex engine must accept the pattern too (it rejects, e.g.,
        # variable-length look-behind); fail here rather than after training.
        from . import _core

        _core.pretokenize(pat, "")
    if counts is not None:
        pat = counts.pattern
        table = counts.as_dict()
    else:
        docs = list(iter_documents(data))
        table = reference.count_chunks(docs, pat, specials)
    if not table:
        raise TrainingError("the training corpus is empty")
    num_merges = vocab_size - 256 - len(specials)
    merges = reference.train_from_counts(
        table, num_merges, min_frequency=min_frequency, max_token_length=max_token_length
    )
    if len(merges) < num_merges:
        warnings.warn(
            f"the corpus supports only {len(merges)} merges; vocab size is"
            f" {256 + len(merges) + len(specials)} instead of {vocab_size}",
            stacklevel=2,
        )
    vocab = reference.build_vocab(merges)
    tokens = [vocab[i] for i in range(len(vocab))]
    special_ids = {s: len(tokens) + i for i, s in enumerate(specials)}
    return Tokenizer(tokens, pat, special_ids, name=name, merges=merges)
