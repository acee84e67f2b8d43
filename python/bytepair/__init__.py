"""bytepair: train, run and inspect byte-pair-encoding tokenizers.

>>> import bytepair
>>> enc = bytepair.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
"""

from __future__ import annotations

import os
from typing import Union

from . import patterns
from .char import CharTokenizer
from .encoding import Tokenizer
from .errors import (
    BytepairError,
    DisallowedSpecialError,
    FormatError,
    PatternError,
    TrainingError,
    UnknownTokenError,
    VocabError,
)
from .registry import encoding_for_model, encoding_name_for_model, get_encoding, list_encoding_names
from .train import train

__version__ = "0.1.0"


def load(path: Union[str, "os.PathLike[str]"]) -> Tokenizer:
    """Loads a tokenizer file (bytepair's own format)."""
    from .formats import native

    return native.load(path)


__all__ = [
    "Tokenizer",
    "CharTokenizer",
    "train",
    "load",
    "get_encoding",
    "list_encoding_names",
    "encoding_for_model",
    "encoding_name_for_model",
    "patterns",
    "BytepairError",
    "DisallowedSpecialError",
    "FormatError",
    "PatternError",
    "TrainingError",
    "UnknownTokenError",
    "VocabError",
]
