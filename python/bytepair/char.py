"""``CharTokenizer``: the character-level "XSLM" teaching tokenizer.

A small BPE tokenizer over characters rather than bytes, with no pre-tokenization
(spaces merge like any other character). Its ids, for a given training text, are
fixed by three rules:

* id 0 is ``"\\ufffd"``, which stands for every character not in the training text;
* ids ``1..`` are the distinct characters of the training text, sorted;
* then one id per merge, in the order the merges were learned.

So ``vocab_size == 1 + distinct characters + merges``. A newline is never merged
with anything: it stays a token of its own (a model trained on these ids can stop
generating at it). Training picks the most frequent adjacent pair, ties going to
the pair that occurs first in the text, and stops after the requested number of
merges or when the best pair occurs fewer than 2 times. The algorithm itself is in
:mod:`bytepair.reference` (``char_train``, ``char_encode``, ``char_decode``).

Files: ``tokenizer.json`` holds ``{"vocab": [...], "merges": [[[a, b], new_id], ...]}``
with non-ASCII characters written as themselves.

>>> tok = CharTokenizer.train("low lower lowest", 4)
>>> [tok.decode([i]) for i in tok.encode("lowest")]
['low', 'e', 's', 't']
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from . import reference
from .atomic import atomic_write_text
from .errors import FormatError, TrainingError, UnknownTokenError, VocabError, json_error_text

PathLike = Union[str, "os.PathLike[str]"]
Merge = Tuple[Tuple[int, int], int]


class CharTokenizer:
    """A character-level BPE tokenizer: a vocabulary of strings (index = id) and
    an ordered list of merges ``((left_id, right_id), new_id)``.

    Usually made by :meth:`train` or :meth:`load`; the constructor validates a
    vocabulary and merge list given directly.

    Args:
        vocab: ``["\\ufffd", <distinct single characters>..., <one string per merge>...]``.
        merges: ``[((left_id, right_id), new_id), ...]`` where the k-th merge makes
            id ``len(vocab) - len(merges) + k`` from two earlier ids.

    Raises:
        VocabError: the vocabulary and merges do not fit together.

    >>> tok = CharTokenizer(["\\ufffd", "a", "b", "ab"], [((1, 2), 3)])
    >>> tok.encode("abba")
    [3, 2, 1]
    """

    def __init__(self, vocab: Sequence[str], merges: Sequence[Any]) -> None:
        try:
            self._vocab, self._merges = _validated(vocab, merges)
        except _Invalid as e:
            raise VocabError(f"{e.message} (at {e.where})") from None

    # ------------------------------------------------------------ training

    @classmethod
    def train(cls, text: str, merges: Optional[int] = None, *, vocab_size: Optional[int] = None) -> "CharTokenizer":
        """Learns up to ``merges`` merges from ``text`` (or as many as make
        ``vocab_size`` tokens; give one of the two).

        Fewer merges are learned when the best remaining pair occurs fewer than 2
        times; that is normal on a small text. Time is O(merges x len(text)).

        Raises:
            TypeError: ``text`` is not a str or the count is not an int.
            TrainingError: ``text`` is empty, ``merges`` is negative, or
                ``vocab_size`` is below 1 + the number of distinct characters.

        >>> tok = CharTokenizer.train("banana bandana", 3)
        >>> tok.vocab[-3:], tok.vocab_size
        (['an', 'ban', 'ana'], 9)
        """
        if not isinstance(text, str):
            raise TypeError(f"training text must be a str, got {type(text).__name__}")
        if not text:
            raise TrainingError("the training text is empty; give at least one character")
        if (merges is None) == (vocab_size is None):
            raise TypeError("give either merges or vocab_size=, not both or neither")
        alphabet = len(reference.char_alphabet(text))
        if vocab_size is not None:
            _check_count("vocab_size", vocab_size)
            if vocab_size < alphabet:
                raise TrainingError(
                    f"vocab_size {vocab_size} is too small: this text needs at least {alphabet}"
                    f" (1 for unknown characters + {alphabet - 1} distinct characters)"
                )
            merges = vocab_size - alphabet
        _check_count("merges", merges)
        vocab, learned = reference.char_train(text, int(merges))  # type: ignore[arg-type]
        return cls(vocab, learned)

    # ------------------------------------------------------------ encoding / decoding

    def encode(self, text: str) -> List[int]:
        """Ids of ``text``: each character to its id (0 when unknown), then the
        merges in learned order.

        >>> CharTokenizer.train("abab", 1).encode("abcab")
        [3, 0, 3]
        """
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}; decode bytes first")
        return reference.char_encode(text, self._vocab, self._merges)

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids`` (unknown characters come back as ``"\\ufffd"``).

        Raises:
            UnknownTokenError: an id is outside ``0..vocab_size-1``.

        >>> CharTokenizer.train("abab", 1).decode([3, 0, 3])
        'ab\\ufffdab'
        """
        out = []
        n = len(self._vocab)
        for i in ids:
            if not isinstance(i, int) or isinstance(i, bool):
                raise TypeError(f"token ids are int, got {type(i).__name__}")
            if not 0 <= i < n:
                raise UnknownTokenError(f"token id {i} is not in the vocabulary (ids are 0..{n - 1})")
            out.append(i)
        return reference.char_decode(out, self._vocab)

    # ------------------------------------------------------------ properties

    @property
    def vocab(self) -> List[str]:
        """The token strings, index = id (a copy)."""
        return list(self._vocab)

    @property
    def merges(self) -> List[Merge]:
        """The merges in learned order: ``((left_id, right_id), new_id)``."""
        return list(self._merges)

    @property
    def vocab_size(self) -> int:
        """Number of ids: 1 + distinct characters + merges."""
        return len(self._vocab)

    @property
    def n_vocab(self) -> int:
        """:attr:`vocab_size` under the byte-level tokenizer's name."""
        return len(self._vocab)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The UTF-8 bytes of one token's string.

        >>> CharTokenizer.train("abab", 1).decode_single_token_bytes(3)
        b'ab'
        """
        return self._token_string(token).encode("utf-8")

    def _token_string(self, token: int) -> str:
        """One token's string (an :class:`~bytepair.errors.UnknownTokenError` for
        an id outside the vocabulary)."""
        if not isinstance(token, int) or isinstance(token, bool):
            raise TypeError(f"token ids are int, got {type(token).__name__}")
        if not 0 <= token < len(self._vocab):
            raise UnknownTokenError(f"token id {token} is not in the vocabulary (ids are 0..{len(self._vocab) - 1})")
        return self._vocab[token]

    # ------------------------------------------------------------ files

    def to_dict(self) -> dict:
        """The ``tokenizer.json`` content as plain JSON-ready data.

        >>> CharTokenizer.train("abab", 1).to_dict()
        {'vocab': ['\\ufffd', 'a', 'b', 'ab'], 'merges': [[[1, 2], 3]]}
        """
        return {"vocab": list(self._vocab), "merges": [[list(p), n] for p, n in self._merges]}

    def save(self, path: PathLike) -> None:
        """Writes ``tokenizer.json`` (UTF-8, non-ASCII unescaped) atomically: a
        failure leaves any previous file untouched."""
        atomic_write_text(path, json.dumps(self.to_dict(), ensure_ascii=False))

    @classmethod
    def load(cls, path: PathLike) -> "CharTokenizer":
        """Reads a ``tokenizer.json`` written by :meth:`save` (or by the XSLM course code).

        Raises:
            OSError: the file cannot be read (``FileNotFoundError`` when missing).
            FormatError: the file is not UTF-8 JSON of the expected shape; the
                message names the path and the offending entry.
        """
        with open(path, "rb") as f:
            raw = f.read()
        try:
            data = json.loads(raw.decode("utf-8"))
        except json.JSONDecodeError as e:
            raise FormatError(f"not valid JSON: {json_error_text(e)}; the file may be truncated", path=path) from e
        except UnicodeDecodeError as e:
            raise FormatError(f"not UTF-8 (byte {e.start}); the file may be damaged", path=path) from e
        if not isinstance(data, dict) or "vocab" not in data or "merges" not in data:
            raise FormatError(
                'not a character tokenizer file: expected {"vocab": [...], "merges": [...]}', path=path
            )
        try:
            vocab, merges = _validated(data["vocab"], data["merges"])
        except _Invalid as e:
            raise FormatError(e.message, path=path, where=e.where) from None
        tok = cls.__new__(cls)
        tok._vocab, tok._merges = vocab, merges
        return tok

    # ------------------------------------------------------------ misc

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CharTokenizer):
            return NotImplemented
        return self._vocab == other._vocab and self._merges == other._merges

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<CharTokenizer vocab_size={len(self._vocab)} merges={len(self._merges)}>"


def _check_count(name: str, n: object) -> None:
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0:
        raise TrainingError(f"{name} must be >= 0, got {n}")


class _Invalid(Exception):
    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.message, self.where = message, where


def _validated(vocab: Any, merges: Any) -> Tuple[List[str], List[Merge]]:
    """Checks the invariants of a vocabulary and merge list, returning clean copies."""
    if not isinstance(vocab, (list, tuple)) or not all(isinstance(s, str) for s in vocab):
        raise _Invalid("vocab must be a list of strings", "$.vocab")
    if not vocab or vocab[0] != reference.UNKNOWN_CHAR:
        raise _Invalid('vocab must start with "\\ufffd" (id 0, the unknown character)', "$.vocab[0]")
    if not isinstance(merges, (list, tuple)):
        raise _Invalid("merges must be a list of [[left_id, right_id], new_id]", "$.merges")
    first_merged = len(vocab) - len(merges)
    if first_merged < 1:
        raise _Invalid(f"{len(merges)} merges for a vocab of {len(vocab)} tokens", "$.merges")
    seen = set()
    for i in range(first_merged):
        c = vocab[i]
        if len(c) != 1 or c in seen:
            raise _Invalid(
                f"token {c!r} at id {i} should be a single character not listed before"
                f" (the first {first_merged} ids are the alphabet; the other {len(merges)} come from merges)",
                f"$.vocab[{i}]",
            )
        seen.add(c)
    clean: List[Merge] = []
    for k, m in enumerate(merges):
        new_id = first_merged + k
        ok = (
            isinstance(m, (list, tuple)) and len(m) == 2
            and isinstance(m[0], (list, tuple)) and len(m[0]) == 2
            and all(_is_int(x) for x in (*m[0], m[1]))
        )
        if not ok:
            raise _Invalid(f"merge {m!r} is not [[left_id, right_id], new_id]", f"$.merges[{k}]")
        (a, b), n = m
        if n != new_id or not (0 <= a < new_id and 0 <= b < new_id) or vocab[a] + vocab[b] != vocab[n]:
            raise _Invalid(
                f"merge {m!r} should make id {new_id} ({vocab[new_id]!r}) from two earlier ids",
                f"$.merges[{k}]",
            )
        clean.append(((a, b), n))
    return list(vocab), clean


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)
