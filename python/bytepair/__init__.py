"""bytepair: train, run and inspect byte-pair-encoding tokenizers.

>>> import bytepair
>>> enc = bytepair.get_encoding("cl100k_base")
>>> enc.encode("hello world")
[15339, 1917]
"""

from __future__ import annotations

from . import patterns
from .char import CharTokenizer
from .conversion import ConvertReport, convert
from .documents import Inputs
from .encoding import Encoding
from .errors import (
    BytepairError,
    ConversionError,
    DisallowedSpecialError,
    FormatError,
    PatternError,
    ShrinkError,
    TrainingError,
    UnknownEncodingError,
    UnknownTokenError,
    VocabError,
)
from .extending import extend
from .formats import load
from .registry import encoding_for_model, encoding_name_for_model, get_encoding, list_encoding_names
from .shrinking import shrink
from .tokenizer import Tokenizer
from .training import train

__version__ = "0.1.0"


__all__ = [
    "BytepairError",
    "CharTokenizer",
    "ConversionError",
    "ConvertReport",
    "DisallowedSpecialError",
    "Encoding",
    "FormatError",
    "Inputs",
    "PatternError",
    "ShrinkError",
    "Tokenizer",
    "TrainingError",
    "UnknownEncodingError",
    "UnknownTokenError",
    "VocabError",
    "convert",
    "encoding_for_model",
    "encoding_name_for_model",
    "extend",
    "get_encoding",
    "list_encoding_names",
    "load",
    "patterns",
    "shrink",
    "train",
]
