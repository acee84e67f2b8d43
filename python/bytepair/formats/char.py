"""The XSLM character-level ``tokenizer.json``: ``{"vocab": [...], "merges": [[[a, b], new_id], ...]}``.

Reading and writing are :class:`bytepair.CharTokenizer`'s own
(:meth:`~bytepair.CharTokenizer.load` / :meth:`~bytepair.CharTokenizer.save`);
this module adds format detection. A character-level tokenizer maps characters,
not bytes, and knows no pre-tokenization, so it cannot be converted to the
byte-level formats (and they cannot be converted to it).
"""

from __future__ import annotations

import os
from typing import Any, Union

from ..char import CharTokenizer

PathLike = Union[str, "os.PathLike[str]"]


def looks_like(d: Any) -> bool:
    """True for the parsed JSON of a character-level file.

    >>> looks_like({"vocab": ["\\ufffd", "a"], "merges": []})
    True
    >>> looks_like({"format": "bytepair", "vocab": [], "merges": []})
    False
    """
    return (
        isinstance(d, dict)
        and set(d) == {"vocab", "merges"}
        and isinstance(d["vocab"], list)
        and isinstance(d["merges"], list)
    )


def _cls():
    return CharTokenizer


def load(path: PathLike):
    """Reads a character-level ``tokenizer.json`` into a :class:`bytepair.CharTokenizer`."""
    return _cls().load(path)


def save(tok: Any, path: PathLike) -> None:
    """Writes a :class:`bytepair.CharTokenizer` (atomically)."""
    if not isinstance(tok, _cls()):
        raise TypeError(f"expected a CharTokenizer, got {type(tok).__name__}")
    tok.save(path)
