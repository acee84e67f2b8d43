"""Mistral's ``tekken.json``, read as ``mistral-common``'s ``Tekkenizer`` reads it.

The file holds a tiktoken vocabulary (``vocab``: ``rank``, base64
``token_bytes``), the pre-tokenization ``pattern`` and the sizes in ``config``.
Ids are laid out as the ``Tekkenizer`` lays them out:

- the ``num_special_tokens`` (``config.default_num_special_tokens``) control
  tokens come first, ids ``0..n-1``: those of ``special_tokens`` in the file,
  or, for files of version v7 and before that list none, the 20 names
  ``mistral-common`` supplies (``<unk>``, ``<s>``, ``</s>``, ``[INST]``, ...),
  then ``<SPECIAL_{i}>`` fillers up to ``n``;
- the ranks follow, shifted by ``n``, cut to ``config.default_vocab_size - n``
  entries (the file may list more).

Special-token text in the input is plain text (``special_text="text"``), as in
``Tekkenizer.encode``, which never reads control tokens from text; decoding a
control token's id gives its name.
"""

from __future__ import annotations

import base64
import binascii
import os
from typing import Any, Dict, List, Optional, Union

from ..errors import FormatError
from ..tokenizer import Tokenizer
from .common import read_json

PathLike = Union[str, "os.PathLike[str]"]

#: The control tokens ``mistral-common`` gives a file (v7 or older) that lists none.
DEPRECATED_SPECIALS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
_OLD_VERSIONS = ("v1", "v2", "v3", "v4", "v5", "v6", "v7")


def looks_like(d: Any) -> bool:
    """Whether parsed JSON is a tekken file (``config`` and a ``vocab`` list)."""
    return isinstance(d, dict) and isinstance(d.get("config"), dict) and isinstance(d.get("vocab"), list)


def _int(config: Dict[str, Any], key: str, path: object) -> int:
    v = config.get(key)
    if type(v) is not int or v < 0:
        raise FormatError(f"config.{key} must be a non-negative integer, got {v!r}", path=path,
                          where=f"$.config.{key}")
    return v


def _specials(d: Dict[str, Any], n: int, path: object) -> Dict[str, int]:
    listed = d.get("special_tokens")
    version = d["config"].get("version")
    if listed is None:
        if version not in _OLD_VERSIONS:
            raise FormatError(f"a tekken file of version {version!r} must list its special_tokens",
                              path=path, where="$.special_tokens")
        names = list(DEPRECATED_SPECIALS)
    else:
        if not isinstance(listed, list) or not all(isinstance(t, dict) and isinstance(t.get("token_str"), str)
                                                   for t in listed):
            raise FormatError("special_tokens is a list of {rank, token_str, is_control}", path=path,
                              where="$.special_tokens")
        names = [t["token_str"] for t in listed]
    if len(names) > n or len(set(names)) != len(names):
        raise FormatError(f"{len(names)} special tokens (some repeated?) for num_special_tokens={n}",
                          path=path, where="$.special_tokens")
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n)]
    return {s: i for i, s in enumerate(names)}


def from_dict(d: Any, *, path: object = None, name: Optional[str] = None) -> Tokenizer:
    """Builds the tokenizer of a parsed ``tekken.json`` (see the module docstring)."""
    if not looks_like(d):
        raise FormatError("a tekken.json file has a config object and a vocab list", path=path, where="$")
    config = d["config"]
    pattern = config.get("pattern")
    if not isinstance(pattern, str):
        raise FormatError("config.pattern must be a string", path=path, where="$.config.pattern")
    n_special = _int(config, "default_num_special_tokens", path)
    vocab_size = _int(config, "default_vocab_size", path)
    inner = vocab_size - n_special
    vocab = d["vocab"]
    if inner < 256 or inner > len(vocab):
        raise FormatError(f"default_vocab_size {vocab_size} - {n_special} special tokens leaves {inner} ranks; "
                          f"the file has {len(vocab)}", path=path, where="$.config.default_vocab_size")
    tokens: List[Optional[bytes]] = [None] * n_special
    for i, entry in enumerate(vocab[:inner]):
        where = f"$.vocab[{i}]"
        if not isinstance(entry, dict) or entry.get("rank") != i or not isinstance(entry.get("token_bytes"), str):
            raise FormatError(f"vocab entry {i} must have rank {i} and base64 token_bytes", path=path, where=where)
        try:
            tokens.append(base64.b64decode(entry["token_bytes"], validate=True))
        except (binascii.Error, ValueError):
            raise FormatError("token_bytes is not valid base64", path=path, where=f"{where}.token_bytes") from None
        if i < 256 and tokens[-1] != bytes([i]):
            raise FormatError(f"rank {i} must be the single byte {i}", path=path, where=where)
    specials = _specials(d, n_special, path)
    try:
        return Tokenizer(tokens, pattern, specials, name=name or "tekken", special_text="text")
    except ValueError as e:
        raise FormatError(str(e), path=path) from e


def load(path: PathLike, *, name: Optional[str] = None) -> Tokenizer:
    """Reads a ``tekken.json`` file."""
    with open(path, "rb") as f:
        data = f.read()
    p = os.fspath(path)
    return from_dict(read_json(p, data), path=p, name=name)
