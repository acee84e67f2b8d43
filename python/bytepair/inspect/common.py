"""What the tools share: the tokenizer protocol they program against, how a
tokenizer or a text source named on the command line is resolved, and token
counting with special-token text as plain text.

Everything here uses only the library; the inspection, rendering, CLI and serve
tools import it, never the reverse.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeGuard, Union, runtime_checkable

from ..char import CharTokenizer
from ..documents import Data as TextSource
from ..documents import read_documents
from ..errors import UnknownEncodingError
from ..formats import load
from ..registry import get_encoding, list_encoding_names
from ..render.text import is_complete_utf8
from ..tokenizer import Tokenizer


@runtime_checkable
class TokenizerLike(Protocol):
    """What the tools need of a tokenizer: a byte-level :class:`bytepair.Tokenizer`
    and the character-level :class:`bytepair.CharTokenizer` both provide it."""

    @property
    def n_vocab(self) -> int: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...

    def decode_single_token_bytes(self, token: int) -> bytes: ...


def tokenizer_name(tok: object) -> str:
    """A tokenizer's label: its ``name``, else its class name."""
    return str(getattr(tok, "name", None) or type(tok).__name__)


#: What the tools take where a tokenizer is meant: a tokenizer object, a bundled
#: encoding name or a tokenizer file.
TokenizerSpec = Union[str, "os.PathLike[str]", TokenizerLike]


def resolve_tokenizer(tok: TokenizerSpec) -> TokenizerLike:
    """The tokenizer meant by ``tok``: a bundled encoding name, a tokenizer file
    path, or a tokenizer object (returned as it is)."""
    if isinstance(tok, str):
        if tok in list_encoding_names():
            return get_encoding(tok)
        if os.path.exists(tok):
            return load(tok)
        raise UnknownEncodingError(
            f"unknown encoding {tok!r}; available: {', '.join(list_encoding_names())}, or a tokenizer file"
        )
    if isinstance(tok, os.PathLike):
        return load(tok)
    return tok


#: Special tokens whose text counts as their id: "all", or an iterable of names.
#: Every other special-token text is plain text in the inspection tools, unlike
#: ``encode``'s default (see bytepair.special): they look at corpora and user
#: text, where that text is data, and report on it rather than refuse it.
SpecialIds = Union[str, Iterable[str]]


def encode_plain(tok: TokenizerLike, text: str, allowed_special: SpecialIds = ()) -> list[int]:
    """Ids for ``text``; special-token text is plain text unless listed in
    ``allowed_special`` (or ``"all"``), never an error."""
    if isinstance(tok, Tokenizer):
        if allowed_special == "all" or (allowed_special and not isinstance(allowed_special, str)):
            allowed = "all" if allowed_special == "all" else set(allowed_special)
            return tok.encode(text, allowed_special=allowed, disallowed_special=())  # type: ignore[arg-type]
        return tok.encode_ordinary(text)
    return list(tok.encode(text))


def count_tokens(tok: TokenizerLike, text: str, allowed_special: SpecialIds = ()) -> int:
    """How many tokens ``tok`` makes of ``text``: special-token text counts as plain
    text (as for counting user documents) unless listed in ``allowed_special``.

    >>> from bytepair import get_encoding
    >>> gpt2 = get_encoding("gpt2")
    >>> count_tokens(gpt2, "<|endoftext|>"), count_tokens(gpt2, "<|endoftext|>", "all")
    (7, 1)
    """
    if isinstance(tok, Tokenizer):
        allowed: Any = "all" if allowed_special == "all" else set(allowed_special or ())
        return int(tok.count(text, allowed_special=allowed, disallowed_special=()))
    return len(encode_plain(tok, text, allowed_special))


def token_bytes(tok: TokenizerLike, i: int) -> bytes:
    """The bytes of token ``i`` (a character-level token's UTF-8)."""
    return tok.decode_single_token_bytes(i)


def is_char_tokenizer(tok: object) -> TypeGuard[CharTokenizer]:
    """Whether ``tok`` is the character-level teaching tokenizer."""
    return isinstance(tok, CharTokenizer)


__all__ = ["TextSource", "TokenizerLike", "TokenizerSpec", "count_tokens", "encode_plain", "is_char_tokenizer", "is_complete_utf8",
           "read_documents", "resolve_tokenizer", "token_bytes", "tokenizer_name"]
