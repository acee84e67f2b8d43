"""The bundled encodings: OpenAI's gpt2 (r50k_base), cl100k_base and o200k_base.

The rank files ship gzipped inside the package (``bytepair/data/``) and are
checked at load against the sha256 values that tiktoken pins, so no network is
ever needed. The files are OpenAI's (MIT licence).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from importlib import resources
from typing import Dict, List

from . import patterns
from .encoding import ENDOFTEXT, Tokenizer
from .errors import FormatError

FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

# name -> (file, sha256 of the uncompressed file as pinned by tiktoken, pattern, specials)
_SPECS = {
    "gpt2": (
        "gpt2.tiktoken.gz",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        patterns.GPT2,
        {ENDOFTEXT: 50256},
    ),
    "r50k_base": (
        "gpt2.tiktoken.gz",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        patterns.GPT2,
        {ENDOFTEXT: 50256},
    ),
    "cl100k_base": (
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        patterns.CL100K,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
    ),
    "o200k_base": (
        "o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        patterns.O200K,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
}

_MODEL_PREFIXES = [
    ("o1", "o200k_base"), ("o3", "o200k_base"), ("o4-mini", "o200k_base"),
    ("gpt-5", "o200k_base"), ("gpt-4.1", "o200k_base"), ("gpt-4.5", "o200k_base"),
    ("gpt-4o", "o200k_base"), ("chatgpt-4o", "o200k_base"), ("gpt-oss", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"), ("gpt-35-turbo", "cl100k_base"),
    ("ft:gpt-4o", "o200k_base"), ("ft:gpt-4", "cl100k_base"), ("ft:gpt-3.5-turbo", "cl100k_base"),
]
_MODELS = {
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base", "gpt2": "gpt2", "gpt-2": "gpt2",
    "davinci": "r50k_base", "curie": "r50k_base", "babbage": "r50k_base", "ada": "r50k_base",
}

_cache: Dict[str, Tokenizer] = {}
_lock = threading.Lock()


def list_encoding_names() -> List[str]:
    """Names accepted by :func:`get_encoding`.

    >>> list_encoding_names()
    ['gpt2', 'r50k_base', 'cl100k_base', 'o200k_base']
    """
    return list(_SPECS)


def read_bundled_ranks(name: str) -> bytes:
    """The uncompressed bytes of a bundled ``.tiktoken`` file, hash-checked."""
    if name not in _SPECS:
        raise ValueError(f"unknown encoding {name!r}; available: {', '.join(_SPECS)}")
    fname, sha, _, _ = _SPECS[name]
    data = gzip.decompress(resources.files(__package__).joinpath("data", fname).read_bytes())
    if hashlib.sha256(data).hexdigest() != sha:
        raise FormatError(
            f"bundled rank file is corrupted (sha256 mismatch, expected {sha}); reinstall bytepair",
            path=f"bytepair/data/{fname}",
        )
    return data


def _parse_tiktoken(data: bytes) -> List[bytes]:
    tokens: List[bytes] = []
    for line in data.splitlines():
        if line:
            tok, rank = line.split()
            if int(rank) != len(tokens):
                raise FormatError(f"rank {int(rank)} out of order")
            tokens.append(base64.b64decode(tok))
    return tokens


def get_encoding(name: str) -> Tokenizer:
    """One of the bundled encodings (cached; loading is offline).

    >>> get_encoding("gpt2").encode("Hello")
    [15496]
    """
    with _lock:
        tok = _cache.get(name)
        if tok is None:
            if name not in _SPECS:
                raise ValueError(f"unknown encoding {name!r}; available: {', '.join(_SPECS)}")
            _, _, pat, specials = _SPECS[name]
            tokens = _parse_tiktoken(read_bundled_ranks(name))
            tok = Tokenizer(tokens, pat, specials, name=name)
            _cache[name] = tok
        return tok


def encoding_name_for_model(model: str) -> str:
    """The encoding name an OpenAI model uses (``gpt-4o`` -> ``o200k_base``)."""
    if model in _MODELS:
        return _MODELS[model]
    for prefix, enc in _MODEL_PREFIXES:
        if model.startswith(prefix):
            return enc
    raise KeyError(f"no encoding is known for model {model!r}; use get_encoding() with one of {list_encoding_names()}")


def encoding_for_model(model: str) -> Tokenizer:
    """The bundled encoding an OpenAI model uses."""
    return get_encoding(encoding_name_for_model(model))
