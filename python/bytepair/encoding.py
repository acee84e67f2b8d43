"""``bytepair.Encoding``: tiktoken's ``Encoding`` constructor, so code written for
tiktoken runs with only the import changed.

tiktoken's README adds special tokens to an encoding this way; with bytepair the
same lines give the same ids:

>>> import bytepair
>>> cl100k_base = bytepair.get_encoding("cl100k_base")
>>> enc = bytepair.Encoding(
...     name="cl100k_im",
...     pat_str=cl100k_base._pat_str,
...     mergeable_ranks=cl100k_base._mergeable_ranks,
...     special_tokens={**cl100k_base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
... )
>>> enc.encode("<|im_start|>hello", allowed_special="all")
[100264, 15339]
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from . import _core
from .errors import ArgumentError, PatternError, VocabError, VocabSizeError
from .special import SpecialText
from .tokenizer import Tokenizer
from .vocab import check_specials, tokens_from_ranks


class Encoding(Tokenizer):
    """A tokenizer built the way ``tiktoken.Encoding`` is.

    Args:
        name: the encoding's name.
        pat_str: the pre-tokenization regex, always taken as a regex (a pattern
            name such as ``"cl100k"`` is not looked up, as in tiktoken).
        mergeable_ranks: token bytes to rank; every single byte must be a token.
        special_tokens: special-token text to id.
        explicit_n_vocab: when given (and not 0), the vocabulary size the
            tokens must make up: ``len(mergeable_ranks) + len(special_tokens)``
            must equal it and the largest id must be ``explicit_n_vocab - 1``;
            otherwise :class:`~bytepair.errors.VocabSizeError` (a ``ValueError``
            and, as tiktoken raises, an ``AssertionError``).

    Special-token text in ``encode`` raises unless allowed, as in tiktoken.
    An ``Encoding`` pickles as an ``Encoding``.

    >>> import bytepair
    >>> gpt2 = bytepair.get_encoding("gpt2")
    >>> enc = Encoding("gpt2_pickle", pat_str=gpt2._pat_str, mergeable_ranks=gpt2._mergeable_ranks,
    ...                special_tokens={"<|pickle|>": 100_000})
    >>> enc.encode("<|pickle|>", allowed_special="all"), enc.max_token_value
    ([100000], 100000)
    """

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Dict[bytes, int],
        special_tokens: Dict[str, int],
        explicit_n_vocab: Optional[int] = None,
    ) -> None:
        if not isinstance(name, str):
            raise ArgumentError(f"name must be a str, not {type(name).__name__}", name="name")
        if not isinstance(pat_str, str):
            raise PatternError(f"pat_str must be a regex string, not {type(pat_str).__name__}")
        if not isinstance(mergeable_ranks, Mapping):
            raise VocabError(f"mergeable_ranks must be a dict of bytes to int, not {type(mergeable_ranks).__name__}")
        if not isinstance(special_tokens, Mapping):
            raise VocabError(f"special_tokens must be a dict of str to int, not {type(special_tokens).__name__}")
        tokens, empty = tokens_from_ranks(mergeable_ranks)
        specials = check_specials(special_tokens)
        _check_shared_ids(specials)
        if explicit_n_vocab is not None and explicit_n_vocab != 0:
            if not isinstance(explicit_n_vocab, int) or isinstance(explicit_n_vocab, bool):
                raise ArgumentError(f"explicit_n_vocab must be an int or None, not {type(explicit_n_vocab).__name__}",
                                    name="explicit_n_vocab")
            _check_n_vocab(explicit_n_vocab, mergeable_ranks, specials)
        self._setup(_core.CoreBPE(tokens, specials, pat_str, empty), pat_str, specials, name, None, "raise")
        self._tokens_cache: Optional[List[bytes]] = tokens

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    def __reduce__(self):
        return (_rebuild_encoding, (self.name, self._tokens, self._pattern, self._special_tokens, self.special_text,
                                    self._empty_ranks))


#: The one id tiktoken's own encodings give two special tokens (o200k_harmony),
#: and the name its decoder gives back there, as bytepair's does.
_SHARED_IN_TIKTOKEN = {200018: frozenset({"<|endofprompt|>", "<|reserved_200018|>"})}


def _check_shared_ids(specials: Dict[str, int]) -> None:
    """A VocabError for two special tokens on one id: tiktoken accepts them, but
    which name its decoder gives back depends on its hash table's order, so
    bytepair could not decode such an id as tiktoken does (o200k_harmony's
    shared id, whose name is known, is let through)."""
    first: Dict[int, str] = {}
    for s, i in specials.items():
        if i in first and frozenset({first[i], s}) != _SHARED_IN_TIKTOKEN.get(i):
            raise VocabError(
                f"special tokens {first[i]!r} and {s!r} both have id {i}; give each special token its own id "
                "(which one tiktoken decodes such an id to depends on its hash order)"
            )
        first.setdefault(i, s)


def _check_n_vocab(n_vocab: int, mergeable_ranks: Dict[bytes, int], specials: Dict[str, int]) -> None:
    """tiktoken's two checks of ``explicit_n_vocab``, as errors that say which failed."""
    given = len(mergeable_ranks) + len(specials)
    if given != n_vocab:
        raise VocabSizeError(
            f"explicit_n_vocab is {n_vocab:,} but the encoding has {len(mergeable_ranks):,} mergeable and "
            f"{len(specials):,} special tokens ({given:,})"
        )
    top = max(max(mergeable_ranks.values()), max(specials.values(), default=0))
    if top != n_vocab - 1:
        raise VocabSizeError(f"explicit_n_vocab is {n_vocab:,} but the largest id is {top:,} (expected {n_vocab - 1:,})")


def _rebuild_encoding(name: str, tokens: List[bytes], pattern: str, specials: Dict[str, int],
                      special_text: SpecialText, empty: Sequence[int] = ()) -> Encoding:  # pickling helper
    enc = Encoding.__new__(Encoding)
    enc._setup(_core.CoreBPE(tokens, specials, pattern, list(empty)), pattern, dict(specials), name, None,
               special_text)
    enc._tokens_cache = tokens
    return enc


__all__: Tuple[str, ...] = ("Encoding",)
