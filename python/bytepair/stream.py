"""Streaming decoding: turn ids into text as they arrive (e.g. from a model),
never emitting half of a multi-byte character.

A token can end in the middle of a UTF-8 sequence (gpt2 splits ``한`` into two
tokens), so decoding ids one at a time with ``decode`` gives U+FFFD for each
half. :class:`StreamDecoder` keeps the incomplete tail bytes until the rest
arrives; bytes that can never become valid UTF-8 are replaced (``errors``)
as soon as that is certain.

>>> import bytepair
>>> d = bytepair.get_encoding("gpt2").stream_decoder()
>>> [d.feed(i) for i in [169, 228, 254, 169, 223, 108]]
['', '', '토', '', '', '큰']
>>> d.flush()
''
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING, Iterable, Union

if TYPE_CHECKING:  # pragma: no cover
    from .tokenizer import Tokenizer


class StreamDecoder:
    """Incremental id -> text decoder bound to one tokenizer.

    Args:
        tokenizer: the tokenizer whose ids are fed.
        errors: how invalid UTF-8 is handled (``"replace"``, ``"strict"``, ...),
            as in ``bytes.decode``.
    """

    def __init__(self, tokenizer: "Tokenizer", errors: str = "replace") -> None:
        self._tok = tokenizer
        self._errors = errors
        self._dec = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def feed(self, ids: Union[int, Iterable[int]]) -> str:
        """Adds one id or several; returns the text completed by them (may be '').

        Raises:
            UnknownTokenError: for an id outside the vocabulary (the decoder state
                is unchanged).
        """
        if isinstance(ids, int):
            data = self._tok.decode_single_token_bytes(ids)
        else:
            data = self._tok.decode_bytes(list(ids))
        return self._dec.decode(data)

    def flush(self) -> str:
        """Ends the stream: returns what is left (incomplete bytes become U+FFFD
        with ``errors="replace"``) and resets the decoder for reuse."""
        out = self._dec.decode(b"", final=True)
        self._dec.reset()
        return out

    @property
    def pending(self) -> bytes:
        """Bytes received but not yet emitted (an incomplete character)."""
        return self._dec.getstate()[0]

    def __repr__(self) -> str:
        return f"<StreamDecoder of {self._tok.name!r}, {len(self.pending)} bytes pending>"
