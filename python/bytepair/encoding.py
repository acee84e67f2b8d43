"""The ``Tokenizer``: one class for the bundled encodings and for trained tokenizers.

Its method names follow tiktoken's ``Encoding`` so code can switch in one line.
The hot loops (pre-tokenization, merging, batch work) run in the Rust core
(``bytepair._core.CoreBPE``); this module owns argument handling and policy.
"""

from __future__ import annotations

import os
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Collection,
    Dict,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from . import _core
from . import patterns as _patterns
from .errors import UnknownTokenError, VocabError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

ENDOFTEXT = "<|endoftext|>"

#: What ``encode`` does by default with special-token text that is not allowed:
#: ``"raise"`` (tiktoken's behaviour) or ``"text"`` (encode it as ordinary text).
SpecialText = Literal["raise", "text"]


class Tokenizer:
    """A byte-level BPE tokenizer: mergeable tokens by rank, a pre-tokenization
    pattern and special tokens.

    Args:
        mergeable_ranks: token bytes to rank (id), or a sequence of token bytes in
            rank order. Ranks must be ``0..n-1`` with no gap and every single byte
            must be a token.
        pattern: a pattern name (``"gpt2"``, ``"cl100k"``, ``"o200k"``), a regex
            string, or ``None`` for no pre-tokenization.
        special_tokens: special-token text to id; ids must be ``>= n``.
        name: a label shown in ``repr`` and saved in files.
        merges: the ordered merge list ``[(left_id, right_id), ...]`` when known
            (training knows it; for other vocabularies it is derived on demand).
        special_text: default treatment of special-token text in ``encode``:
            ``"raise"`` like tiktoken, or ``"text"`` to encode it as plain text.

    >>> tok = Tokenizer([bytes([b]) for b in range(256)] + [b"ab"], pattern=None)
    >>> tok.encode("abc")
    [256, 99]
    """

    def __init__(
        self,
        mergeable_ranks: Union[Mapping[bytes, int], Sequence[bytes]],
        pattern: Optional[str] = "o200k",
        special_tokens: Optional[Mapping[str, int]] = None,
        *,
        name: str = "bytepair",
        merges: Optional[Sequence[Tuple[int, int]]] = None,
        special_text: SpecialText = "raise",
    ) -> None:
        if isinstance(mergeable_ranks, Mapping):
            tokens = _tokens_from_ranks(mergeable_ranks)
        else:
            tokens = [bytes(t) for t in mergeable_ranks]
        specials = dict(special_tokens or {})
        for s, i in specials.items():
            if not isinstance(s, str):
                raise VocabError(f"special token {s!r} is not a str")
            if not isinstance(i, int) or isinstance(i, bool):
                raise VocabError(f"special token {s!r} has a non-integer id {i!r}")
        if special_text not in ("raise", "text"):
            raise ValueError(f"special_text must be 'raise' or 'text', not {special_text!r}")
        self.name = name
        self._pattern = _patterns.resolve(pattern)
        self._tokens = tokens
        self._special_tokens = specials
        self._merges = [tuple(m) for m in merges] if merges is not None else None
        self.special_text: SpecialText = special_text
        self._core = _core.CoreBPE(tokens, specials, self._pattern)
        self._ranks: Optional[Dict[bytes, int]] = None

    # ------------------------------------------------------------ properties

    @property
    def pattern(self) -> Optional[str]:
        """The pre-tokenization regex string, or None."""
        return self._pattern

    @property
    def pattern_name(self) -> Optional[str]:
        """``"gpt2"``, ``"cl100k"`` or ``"o200k"`` for the built-in patterns, else None."""
        return _patterns.name_of(self._pattern)

    @property
    def n_vocab(self) -> int:
        """One more than the largest id (mergeable or special)."""
        top = len(self._tokens) - 1
        if self._special_tokens:
            top = max(top, max(self._special_tokens.values()))
        return top + 1

    @property
    def eot_token(self) -> Optional[int]:
        """The id of ``<|endoftext|>``, or None when it is not a special token."""
        return self._special_tokens.get(ENDOFTEXT)

    @property
    def special_tokens(self) -> Dict[str, int]:
        """Special-token text to id (a copy)."""
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set:
        """The special-token strings."""
        return set(self._special_tokens)

    @property
    def mergeable_ranks(self) -> Dict[bytes, int]:
        """Token bytes to rank for every mergeable token."""
        if self._ranks is None:
            self._ranks = {t: i for i, t in enumerate(self._tokens)}
        return dict(self._ranks)

    @property
    def token_bytes_list(self) -> List[bytes]:
        """Mergeable token bytes in rank order (a copy)."""
        return list(self._tokens)

    @property
    def merges(self) -> List[Tuple[int, int]]:
        """The ordered merge list: ``merges[k]`` is the pair ``(left_id, right_id)``
        whose merge made the k-th multi-byte token."""
        if self._merges is None:
            self._merges = [tuple(m) for m in self._core.derive_merges()]
        return list(self._merges)

    # ------------------------------------------------------------ encoding

    def _special_sets(
        self,
        allowed_special: Union[Literal["all"], AbstractSet[str]],
        disallowed_special: Union[Literal["all"], Collection[str], None],
    ) -> Tuple[List[str], List[str]]:
        if allowed_special == "all":
            allowed = set(self._special_tokens)
        else:
            allowed = set(allowed_special)
        if disallowed_special is None:
            disallowed_special = "all" if self.special_text == "raise" else ()
        if disallowed_special == "all":
            disallowed = set(self._special_tokens) - allowed
        else:
            disallowed = set(disallowed_special)
        return list(allowed), list(disallowed)

    def encode(
        self,
        text: str,
        *,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = frozenset(),
        disallowed_special: Union[Literal["all"], Collection[str], None] = None,
    ) -> List[int]:
        """Encodes text to ids.

        Special-token text becomes its id only when listed in ``allowed_special``
        (or ``"all"``). Otherwise, by default (``special_text="raise"``) it raises
        :class:`~bytepair.errors.DisallowedSpecialError` like tiktoken; pass
        ``disallowed_special=()`` (or build the tokenizer with
        ``special_text="text"``) to encode it as plain text.
        """
        text = _check_text(text)
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        try:
            return self._core.encode(text, allowed, disallowed)
        except UnicodeEncodeError:
            return self._core.encode(_fix_surrogates(text), allowed, disallowed)

    def encode_ordinary(self, text: str) -> List[int]:
        """Encodes text with special-token text treated as plain text."""
        text = _check_text(text)
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_fix_surrogates(text))

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: Optional[int] = None,
        allowed_special: Union[Literal["all"], AbstractSet[str]] = frozenset(),
        disallowed_special: Union[Literal["all"], Collection[str], None] = None,
    ) -> List[List[int]]:
        """Encodes many texts in parallel (Rust threads, GIL released)."""
        if isinstance(texts, str):
            raise TypeError("encode_batch takes a list of str; for one text use encode()")
        texts = [_fix_surrogates(_check_text(t)) for t in texts]
        allowed, disallowed = self._special_sets(allowed_special, disallowed_special)
        return self._core.encode_batch(texts, allowed, disallowed)

    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: Optional[int] = None) -> List[List[int]]:
        """Like :meth:`encode_batch` with special-token text as plain text."""
        return self.encode_batch(texts, num_threads=num_threads, disallowed_special=())

    # ------------------------------------------------------------ decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Concatenated bytes of the ids. Unknown ids raise UnknownTokenError (a KeyError)."""
        return self._core.decode_bytes(_check_ids(tokens))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids to text; invalid UTF-8 is handled by ``errors`` (default: U+FFFD)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id."""
        return self._core.token_bytes(_check_id(token))

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each id."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    # ------------------------------------------------------------ truncation

    def truncate(self, vocab_size: int) -> Tuple["Tokenizer", Dict[int, int]]:
        """Keeps the first merges (any prefix of a merge list is a valid tokenizer)
        and the special tokens, so that ``n_vocab == vocab_size``.

        Returns ``(tokenizer, id_map)`` where ``id_map`` maps every old id that
        survives to its new id (mergeable ids keep their value; special tokens are
        renumbered after the kept merges, in their old order).

        >>> tok = Tokenizer([bytes([b]) for b in range(256)] + [b"ab", b"abc"], None, {"<s>": 258})
        >>> small, ids = tok.truncate(258)
        >>> small.n_vocab, ids[258]
        (258, 257)
        """
        n_special = len(self._special_tokens)
        keep = vocab_size - n_special
        if keep < 256 or keep > len(self._tokens):
            raise ValueError(
                f"vocab_size must be between {256 + n_special} and {self.n_vocab}, got {vocab_size}"
            )
        tokens = self._tokens[:keep]
        id_map = {i: i for i in range(keep)}
        specials: Dict[str, int] = {}
        for k, (s, old) in enumerate(sorted(self._special_tokens.items(), key=lambda kv: kv[1])):
            specials[s] = keep + k
            id_map[old] = keep + k
        merges = None
        if self._merges is not None:
            n_multi = sum(1 for t in tokens if len(t) > 1)
            merges = self._merges[:n_multi]
        tok = Tokenizer(tokens, self._pattern, specials, name=self.name, merges=merges,
                        special_text=self.special_text)
        return tok, id_map

    # ------------------------------------------------------------ files

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the tokenizer in bytepair's JSON format (atomic)."""
        from .formats import native

        native.save(self, path)

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r} n_vocab={self.n_vocab} pattern={self.pattern_name or ('custom' if self._pattern else None)!r}>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tokenizer):
            return NotImplemented
        return (
            self._tokens == other._tokens
            and self._pattern == other._pattern
            and self._special_tokens == other._special_tokens
        )

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (
            _rebuild,
            (self.name, self._tokens, self._pattern, self._special_tokens, self._merges, self.special_text),
        )


def _rebuild(name, tokens, pattern, specials, merges, special_text):  # pickling helper
    return Tokenizer(tokens, pattern, specials, name=name, merges=merges, special_text=special_text)


def _tokens_from_ranks(ranks: Mapping[bytes, int]) -> List[bytes]:
    tokens: List[Optional[bytes]] = [None] * len(ranks)
    for tok, r in ranks.items():
        if not isinstance(r, int) or r < 0 or r >= len(ranks):
            raise VocabError(
                f"ranks must be 0..{len(ranks) - 1} with no gap; token {tok!r} has rank {r!r}"
            )
        if tokens[r] is not None:
            raise VocabError(f"rank {r} is given to both {tokens[r]!r} and {tok!r}")
        tokens[r] = bytes(tok)
    return tokens  # type: ignore[return-value]


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}; decode bytes first")
    return text


def _fix_surrogates(text: str) -> str:
    """Replaces lone surrogates with U+FFFD, as tiktoken does."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _check_id(i: object) -> int:
    if not isinstance(i, int) or isinstance(i, bool):
        raise TypeError(f"token ids are int, got {type(i).__name__}")
    if i < 0:
        raise UnknownTokenError(f"token id {i} is not in the vocabulary")
    return i


def _check_ids(ids: Iterable[int]) -> List[int]:
    out = list(ids)
    for i in out:
        _check_id(i)
    return out
