"""Decoding: ids to bytes and text, one list or many, or a stream that never
emits half a character. :class:`bytepair.Tokenizer` inherits these methods; the
byte lookups run in the core (``src/core_bpe/decode.rs``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, cast

from . import _core
from .checks import check_threads
from .errors import UnknownTokenError
from .stream import StreamDecoder

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer


class Decoding:
    """The decoding methods, over the tokenizer's ``_core``."""

    _core: _core.CoreBPE

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """Concatenated bytes of the ids.

        Raises:
            UnknownTokenError: (a ``KeyError``) naming the first id that is not in
                the vocabulary (negative and huge ids included).
            TypeError: for ids that are not integers.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode_bytes([47991, 250])
        b'\\xed\\x95\\x9c'
        """
        try:
            return self._core.decode_bytes(tokens)
        except UnknownTokenError as e:
            raise _with_range(e, self._core.n_vocab) from None
        except (OverflowError, TypeError):
            _raise_bad_ids(tokens, self._core.n_vocab)
            raise

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """Decodes ids to text; invalid UTF-8 is handled by ``errors`` (default: U+FFFD).

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode([47991, 250, 166, 113, 255])
        '한국'
        """
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_batch(
        self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: Optional[int] = None
    ) -> List[str]:
        """Decodes many id lists (byte assembly runs on Rust threads)."""
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: Optional[int] = None
    ) -> List[bytes]:
        """The bytes of many id lists."""
        threads = check_threads(num_threads)
        try:
            return self._core.decode_batch_bytes(batch, threads)
        except (OverflowError, TypeError):
            for ids in batch:
                _raise_bad_ids(ids, self._core.n_vocab)
            raise

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one id.

        >>> import bytepair
        >>> bytepair.get_encoding("gpt2").decode_single_token_bytes(15496)
        b'Hello'
        """
        try:
            return self._core.token_bytes(token)
        except UnknownTokenError as e:
            raise _with_range(e, self._core.n_vocab) from None
        except (OverflowError, TypeError):
            _raise_bad_ids([token], self._core.n_vocab)
            raise

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each id.

        >>> import bytepair
        >>> bytepair.get_encoding("cl100k_base").decode_tokens_bytes([15339, 1917])
        [b'hello', b' world']
        """
        try:
            return self._core.tokens_bytes(tokens)
        except UnknownTokenError as e:
            raise _with_range(e, self._core.n_vocab) from None
        except (OverflowError, TypeError):
            _raise_bad_ids(tokens, self._core.n_vocab)
            raise

    def stream_decoder(self, errors: str = "replace") -> "StreamDecoder":
        """An incremental decoder: ``feed(id | ids)`` returns only whole characters
        and ``flush()`` the rest (see :class:`bytepair.stream.StreamDecoder`).

        >>> import bytepair
        >>> d = bytepair.get_encoding("gpt2").stream_decoder()
        >>> [d.feed(i) for i in [47991, 250, 166, 113, 255]]
        ['', '한', '', '', '국']
        """
        return StreamDecoder(cast("Tokenizer", self), errors=errors)


def _with_range(e: UnknownTokenError, n_vocab: int) -> UnknownTokenError:
    """The core's unknown-id error with the range of ids added, as for negative ids."""
    msg = str(e)
    if "(ids are" in msg:
        return e
    inside = e.id is not None and 0 <= e.id < n_vocab
    out = UnknownTokenError(f"{msg} (a gap: no token holds that id)" if inside else f"{msg} (ids are 0..{n_vocab - 1})")
    out.id = e.id
    return out


def _raise_bad_ids(ids: Iterable[object], n_vocab: int) -> None:
    """Raises the precise error for the first id the core could not convert."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"token ids must be a sequence of int, not {type(ids).__name__}")
    for i in ids:
        if not hasattr(i, "__index__") or isinstance(i, float):
            raise TypeError(f"token ids are int, got {type(i).__name__} ({i!r})")
        v = i.__index__()  # type: ignore[attr-defined]
        if v < 0 or v >= n_vocab:
            raise UnknownTokenError(f"token id {v} is not in the vocabulary (ids are 0..{n_vocab - 1})")
