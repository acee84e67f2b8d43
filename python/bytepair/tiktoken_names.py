"""The rest of tiktoken's ``Encoding`` API, for code that switches to bytepair in
one line: the underscore attributes and methods tiktoken exposes
(``_mergeable_ranks``, ``_pat_str``, ``_encode_bytes``, ``_encode_single_piece``,
``_encode_only_native_bpe``) and its less common public methods
(``is_special_token``, ``token_byte_values``, ``decode_with_offsets``,
``encode_with_unstable``). :class:`bytepair.Tokenizer` inherits them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _core, budget
from .checks import check_text, fix_surrogates
from .special import NO_SPECIALS, AllowedSpecial, DisallowedSpecial

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer


class TiktokenNames:
    """tiktoken's remaining ``Encoding`` names, over the attributes and methods
    that :class:`bytepair.Tokenizer` defines."""

    _core: _core.CoreBPE
    _pattern: Optional[str]
    _special_tokens: Dict[str, int]

    if TYPE_CHECKING:  # pragma: no cover

        @property
        def mergeable_ranks(self) -> Dict[bytes, int]: ...

        def _rank_map(self) -> Mapping[bytes, int]: ...

        def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]: ...

        def encode_ordinary(self, text: str, *, num_threads: Optional[int] = None) -> List[int]: ...

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        """tiktoken's attribute: mergeable token bytes to rank (a copy); gaps
        (p50k_base's 50256, which is ``<|endoftext|>``) are not in it."""
        return self.mergeable_ranks

    @property
    def _pat_str(self) -> Optional[str]:
        """tiktoken's attribute: the pre-tokenization regex (None for no splitting)."""
        return self._pattern

    def is_special_token(self, token: int) -> bool:
        """Whether an id is a special token's (tiktoken's name).

        >>> import bytepair
        >>> enc = bytepair.get_encoding("cl100k_base")
        >>> enc.is_special_token(100257), enc.is_special_token(15339)
        (True, False)
        """
        if not isinstance(token, int):
            raise TypeError(f"token must be an int, not {type(token).__name__}")
        return token in self._special_ids

    @property
    def _special_ids(self) -> AbstractSet[int]:
        ids = self.__dict__.get("_special_id_set")
        if ids is None or len(ids) > len(self._special_tokens):
            ids = frozenset(self._special_tokens.values())
            self.__dict__["_special_id_set"] = ids
        return ids

    def token_byte_values(self) -> List[bytes]:
        """Every mergeable token's bytes, sorted (tiktoken's ``token_byte_values``).

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").token_byte_values()[-1]
        b'\\xff'
        >>> len(bytepair.get_encoding("gpt2").token_byte_values())
        50256
        """
        return sorted(self._rank_map())

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """``(text, offsets)``: the decoded text and, per token, the index of the
        character holding its first byte (tiktoken's semantics; invalid UTF-8
        raises ``UnicodeDecodeError`` as there).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").decode_with_offsets([15339, 1917])
        ('hello world', [0, 5])
        """
        parts = self.decode_tokens_bytes(tokens)
        offsets = []
        chars = 0
        for b in parts:
            offsets.append(max(0, chars - (1 if b and 0x80 <= b[0] < 0xC0 else 0)))
            chars += sum(1 for c in b if not 0x80 <= c < 0xC0)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def _encode_bytes(self, data: bytes) -> List[int]:
        """tiktoken's ``_encode_bytes``: encodes bytes that need not be UTF-8 (see
        :func:`bytepair.budget.encode_bytes`).

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base")._encode_bytes(b" \\xec\\x8b\\xa4\\xed")
        [62085]
        """
        return budget.encode_bytes(cast("Tokenizer", self), data)

    def _encode_single_piece(self, text_or_bytes: Union[str, bytes]) -> List[int]:
        """tiktoken's ``_encode_single_piece``: text (or bytes) merged as one piece,
        without the pre-tokenizer; special-token text is plain text.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2")._encode_single_piece("helloqqqq")
        [31373, 38227, 38227]
        """
        if isinstance(text_or_bytes, str):
            text_or_bytes = fix_surrogates(check_text(text_or_bytes)).encode("utf-8")
        elif not isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        return self._core.encode_single_piece(bytes(text_or_bytes))

    def _encode_only_native_bpe(self, text: str) -> List[int]:
        """tiktoken's ``_encode_only_native_bpe`` (there: the pattern applied with
        the ``regex`` module, each piece merged on its own). The pieces are the
        pre-tokenizer's, so this is :meth:`encode_ordinary`.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2")._encode_only_native_bpe("hello world")
        [31373, 995]
        """
        return self.encode_ordinary(text)

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = NO_SPECIALS,
        disallowed_special: DisallowedSpecial = "all",
    ) -> Tuple[List[int], List[List[int]]]:
        """tiktoken's ``encode_with_unstable``: the tokens that no continuation of
        ``text`` can change, and the possible token sequences for the rest (see
        :func:`bytepair.budget.encode_with_unstable`).

        >>> import bytepair
        >>> stable, completions = bytepair.get_encoding("gpt2").encode_with_unstable("hello fanta")
        >>> stable, [31373, 277, 4910] in [stable + c for c in completions]
        ([31373], True)
        """
        if allowed_special is NO_SPECIALS and disallowed_special == "all" and type(text) is str:
            # the default call, without the argument normalisation
            try:
                return self._core.encode_with_unstable(text)
            except UnicodeEncodeError:
                pass  # lone surrogates: the general path repairs them
        return budget.encode_with_unstable(cast("Tokenizer", self), text, allowed_special=allowed_special,
                                           disallowed_special=disallowed_special)
