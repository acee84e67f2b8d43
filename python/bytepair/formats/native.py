"""bytepair's own file format: loading into a :class:`~bytepair.Tokenizer`.

The layout, the writer and the validating parser are in :mod:`bytepair.native_json`
(which the tokenizer's own :meth:`~bytepair.Tokenizer.save` uses).
"""

from __future__ import annotations

import os
from typing import Any, Union

from ..errors import FormatError
from ..native_json import FORMAT, VERSION, parse, read, save, str_to_token, to_dict, token_to_str
from ..tokenizer import Tokenizer


def from_dict(d: Any, *, path: object = None) -> Tokenizer:
    """Builds a tokenizer from the dict of a bytepair file, validating it."""
    args = parse(d, path=path)
    try:
        return Tokenizer(**args)
    except ValueError as e:
        raise FormatError(str(e), path=path) from e


def load(path: Union[str, "os.PathLike[str]"]) -> Tokenizer:
    """Reads a bytepair file."""
    return from_dict(read(path), path=path)


__all__ = ["FORMAT", "VERSION", "from_dict", "load", "save", "str_to_token", "to_dict", "token_to_str"]
