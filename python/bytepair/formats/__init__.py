"""Tokenizer file formats, one module per format, and format detection.

- :mod:`.native`: bytepair's own versioned JSON file (``"format": "bytepair"``).
- :mod:`.tiktoken`: tiktoken rank files (``.tiktoken``).
- :mod:`.gpt2`: GPT-2 style ``vocab.json`` + ``merges.txt``.
- :mod:`.hf_json`: Hugging Face ``tokenizer.json`` (byte-level BPE).
- :mod:`.char`: the XSLM character-level ``tokenizer.json``.
- :mod:`.tekken`: Mistral's ``tekken.json`` (read only).

:func:`detect` names the format of a path and :func:`load` reads any of them;
``bytepair.load`` is this :func:`load`.

>>> import tempfile, os
>>> from bytepair import get_encoding
>>> path = os.path.join(tempfile.mkdtemp(), "gpt2.tiktoken")
>>> tiktoken_ranks.save(get_encoding("gpt2"), path)
>>> detect(path)
'tiktoken'
>>> load(path) == get_encoding("gpt2")   # the bytes of a bundled file: preset found
True
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _core
from ..errors import FormatError
from ..registry import list_encoding_names
from . import char, gpt2, hf_folder, hf_json, native, tekken, tiktoken_ranks
from .common import UNSET, core_json_error, read_json

PathLike = Union[str, "os.PathLike[str]"]

#: Format names, as used by :func:`detect` and ``bytepair convert --to``
#: (``tekken`` is read only).
FORMATS = ("bytepair", "tiktoken", "hf", "gpt2", "char", "tekken")

_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2} \d+\r?$")


def _object_keys(path: str, data: bytes) -> Optional[List[str]]:
    """The top-level keys of a JSON object file (its values are not built)."""
    try:
        return _core.json_object_keys(data)
    except FormatError as e:
        raise core_json_error(e, path, data) from None


def _sniff_json(path: str, data: bytes) -> str:
    keys = _object_keys(path, data)
    if keys is not None:
        if "format" in keys:  # bytepair's files say what they are; native names a wrong value
            return "bytepair"
        if "model" in keys:
            return "hf"
    d = read_json(path, data)
    if isinstance(d, dict):
        if tekken.looks_like(d):
            return "tekken"
        if char.looks_like(d):
            return "char"
        if d and all(isinstance(v, int) for v in d.values()):
            return "gpt2"
    raise FormatError(
        "JSON, but not a tokenizer file bytepair knows (bytepair, tokenizer.json, "
        "character-level tokenizer.json or GPT-2 vocab.json)",
        path=path,
    )


def detect(path: PathLike) -> str:
    """The format of a file or folder: one of :data:`FORMATS`.

    A folder holds a ``tokenizer.json`` (read first, as ``transformers`` does) or
    a GPT-2 pair (``vocab.json`` + ``merges.txt``); ``merges.txt`` names a GPT-2 pair; other files are
    recognised by content.
    """
    return _detect(os.fspath(path))[0]


def _detect(p: str) -> Tuple[str, Optional[bytes]]:
    """:func:`detect`, with the bytes of the file read to tell (a folder's
    ``tokenizer.json``; ``None`` for a GPT-2 pair)."""
    if os.path.isdir(p):
        # a transformers folder may hold both; transformers reads tokenizer.json
        if os.path.isfile(os.path.join(p, "tokenizer.json")):
            return _detect(os.path.join(p, "tokenizer.json"))
        if os.path.isfile(os.path.join(p, gpt2.VOCAB_FILE)) and os.path.isfile(os.path.join(p, gpt2.MERGES_FILE)):
            return "gpt2", None
        raise FormatError("folder holds neither vocab.json + merges.txt nor tokenizer.json", path=p)
    with open(p, "rb") as f:
        data = f.read()
    return _detect_data(p, data), data


def _detect_data(p: str, data: bytes) -> str:
    head = data.lstrip()[:1]
    if head == b"{":
        return _sniff_json(p, data)
    if os.path.basename(p) == gpt2.MERGES_FILE or data.startswith(b"#version"):
        return "gpt2"
    first = next((ln for ln in data.splitlines() if ln.strip()), b"")
    if _TIKTOKEN_LINE.match(first):
        return "tiktoken"
    if head in (b"[", b'"') or head.isdigit():
        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            pass
        else:
            raise FormatError(
                f"JSON (a {type(value).__name__}), but not a tokenizer file bytepair knows (bytepair, "
                "tokenizer.json, character-level tokenizer.json or GPT-2 vocab.json: each is a JSON object)",
                path=p,
            )
    raise FormatError(
        "unrecognised file: not JSON, not a .tiktoken rank file, not a GPT-2 merges.txt", path=p
    )


def load(
    path: PathLike,
    *,
    pattern: object = UNSET,
    special_tokens: Optional[Dict[str, int]] = None,
    preset: Optional[str] = None,
    ignore_normalizer: bool = False,
    name: Optional[str] = None,
) -> Any:
    """Reads a tokenizer file of any supported format (see :func:`detect`).

    Args:
        path: a file, or a folder holding a GPT-2 pair or a ``tokenizer.json``
            (beside a ``tokenizer_config.json``, read as ``transformers``'
            ``AutoTokenizer`` reads the folder: :mod:`.hf_folder`).
        pattern: pre-tokenization pattern, for formats that do not store one
            (``.tiktoken``; GPT-2 files, default GPT-2's pattern). ``None`` means
            no pre-tokenization.
        special_tokens: special-token text to id, for ``.tiktoken`` files (and
            extra ones for GPT-2 files).
        preset: for ``.tiktoken``: take pattern and specials from a bundled
            encoding (``"cl100k_base"``).
        ignore_normalizer: for ``tokenizer.json``: load despite a normalizer.
        name: the tokenizer's name.

    Returns:
        A :class:`bytepair.Tokenizer`, or a :class:`bytepair.CharTokenizer` for a
        character-level file.

    Raises:
        FormatError: the file is malformed or of no known format (the message
            names the file and the line or JSON path).
        TypeError: an option that the detected format does not take (a file that
            stores its own pattern is never silently overridden).
    """
    p = os.fspath(path)
    if not os.path.exists(p) and isinstance(path, str) and path in list_encoding_names():
        raise FileNotFoundError(
            2, f"No such file or directory ({path!r} is a bundled encoding: bytepair.get_encoding({path!r}))", p
        )
    fmt, data = _detect(p)
    folder = os.path.isdir(p) and fmt != "gpt2"
    if folder:
        p = os.path.join(p, "tokenizer.json")
    given = {
        "pattern": pattern is not UNSET,
        "special_tokens": special_tokens is not None,
        "preset": preset is not None,
        "ignore_normalizer": ignore_normalizer,
        "name": name is not None,
    }
    takes = {
        "tiktoken": {"pattern", "special_tokens", "preset", "name"},
        "gpt2": {"pattern", "special_tokens", "name"},
        "hf": {"ignore_normalizer", "name"},
        "bytepair": set(),
        "char": set(),
        "tekken": {"name"},
    }[fmt]
    extra = [k for k, v in given.items() if v and k not in takes]
    if extra:
        raise TypeError(
            f"{p} is a {fmt} file, which does not take {', '.join(extra)}"
            + (" (it stores its own pattern and special tokens)" if fmt in ("bytepair", "hf") else "")
        )
    if fmt == "tiktoken":
        return tiktoken_ranks.load(p, pattern=pattern, special_tokens=special_tokens, preset=preset, name=name)
    if fmt == "gpt2":
        return gpt2.load(p, pattern=pattern, special_tokens=special_tokens, name=name)
    if fmt == "hf" and folder and not ignore_normalizer:
        return hf_folder.load(os.path.dirname(p), data=data, name=name)
    if fmt == "hf":
        return hf_json.load(p, ignore_normalizer=ignore_normalizer, name=name, data=data)
    if fmt == "char":
        return char.load(p)
    if fmt == "tekken":
        return tekken.load(p, name=name)
    return native.load(p)


__all__ = ["FORMATS", "char", "detect", "gpt2", "hf_json", "load", "native", "tekken", "tiktoken"]
