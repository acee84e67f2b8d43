"""The bundled encodings: OpenAI's gpt2 (r50k_base), cl100k_base and o200k_base.

The rank files ship gzipped inside the package (``bytepair/data/``) and are
checked at load against the sha256 values that tiktoken pins, so no network is
ever needed. The files are OpenAI's (MIT licence). Loading decompresses the file,
hashes it, and parses it in Rust (no Python object per token); the result is
cached per process.
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from importlib import resources
from typing import Any, Dict, List, NamedTuple, Optional

from . import _core, patterns
from .errors import FormatError, UnknownEncodingError
from .tokenizer import ENDOFTEXT, Tokenizer

FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


class _Spec(NamedTuple):
    file: str
    sha256: str  # of the uncompressed file, as pinned by tiktoken
    pattern: str
    specials: Dict[str, int]


_GPT2 = _Spec(
    "gpt2.tiktoken.gz",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    patterns.GPT2,
    {ENDOFTEXT: 50256},
)
_SPECS: Dict[str, _Spec] = {
    "gpt2": _GPT2,
    "r50k_base": _GPT2,
    "cl100k_base": _Spec(
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        patterns.CL100K,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
    ),
    "o200k_base": _Spec(
        "o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        patterns.O200K,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
}

# Model names as tiktoken 0.14 maps them, restricted to the bundled encodings.
# Exact names first, then prefixes (a dated or fine-tuned variant of a model).
_MODELS: Dict[str, str] = {
    "o1": "o200k_base", "o3": "o200k_base", "o4-mini": "o200k_base", "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base", "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base", "gpt-3.5-turbo": "cl100k_base", "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base", "davinci-002": "cl100k_base", "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base", "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-001": "r50k_base", "text-curie-001": "r50k_base", "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base", "davinci": "r50k_base", "curie": "r50k_base",
    "babbage": "r50k_base", "ada": "r50k_base",
    "text-similarity-davinci-001": "r50k_base", "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base", "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base", "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base", "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base", "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
_MODEL_PREFIXES = [
    ("o1-", "o200k_base"), ("o3-", "o200k_base"), ("o4-mini-", "o200k_base"), ("gpt-5", "o200k_base"),
    ("gpt-4.5-", "o200k_base"), ("gpt-4.1-", "o200k_base"), ("chatgpt-4o-", "o200k_base"),
    ("gpt-4o-", "o200k_base"), ("gpt-4-", "cl100k_base"), ("gpt-3.5-turbo-", "cl100k_base"),
    ("gpt-35-turbo-", "cl100k_base"), ("ft:gpt-4o", "o200k_base"), ("ft:gpt-4", "cl100k_base"),
    ("ft:gpt-3.5-turbo", "cl100k_base"), ("ft:davinci-002", "cl100k_base"),
    ("ft:babbage-002", "cl100k_base"),
]

_cache: Dict[str, Tokenizer] = {}
_tiktoken_cache: Dict[str, Any] = {}
_lock = threading.Lock()


def list_encoding_names() -> List[str]:
    """Names accepted by :func:`get_encoding`.

    >>> list_encoding_names()
    ['gpt2', 'r50k_base', 'cl100k_base', 'o200k_base']
    """
    return list(_SPECS)


def bundled_name_for_sha256(sha256: str) -> Optional[str]:
    """The first bundled encoding whose rank file (uncompressed) has this SHA-256, or None.

    >>> bundled_name_for_sha256("306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
    'gpt2'
    """
    for name, spec in _SPECS.items():
        if spec.sha256 == sha256:
            return name
    return None


def _spec(name: str) -> _Spec:
    if not isinstance(name, str):
        raise TypeError(f"encoding name must be a str, not {type(name).__name__}")
    spec = _SPECS.get(name)
    if spec is None:
        raise UnknownEncodingError(
            f"unknown encoding {name!r}; bundled encodings: {', '.join(_SPECS)}"
            " (for a tokenizer file use bytepair.load(path))"
        )
    return spec


def read_bundled_ranks(name: str) -> bytes:
    """The uncompressed bytes of a bundled ``.tiktoken`` file, hash-checked.

    Raises:
        UnknownEncodingError: for a name not in :func:`list_encoding_names`.
        FormatError: naming the file when it is corrupted (sha256 mismatch).
    """
    spec = _spec(name)
    data = gzip.decompress(resources.files(__package__).joinpath("data").joinpath(spec.file).read_bytes())
    check_sha256(data, spec.sha256, f"bytepair/data/{spec.file}")
    return data


def check_sha256(data: bytes, expected: str, path: str) -> None:
    """Raises :class:`FormatError` naming ``path`` when ``data`` does not hash to ``expected``.

    >>> check_sha256(b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "x")
    """
    got = hashlib.sha256(data).hexdigest()
    if got != expected:
        raise FormatError(
            f"rank file is corrupted (sha256 {got}, expected {expected}); reinstall bytepair",
            path=path,
        )


def load_bundled(name: str, data: bytes) -> Tokenizer:
    """Builds the tokenizer of a bundled encoding from the (checked) rank-file bytes."""
    spec = _spec(name)
    core = _core.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern)
    return Tokenizer._from_core(core, spec.pattern, spec.specials, name=name, bundled=name)


def get_encoding(name: str) -> Tokenizer:
    """One of the bundled encodings (loaded once per process; offline).

    The returned object is shared: use :meth:`Tokenizer.with_special_text` rather
    than setting ``special_text`` on it.

    >>> get_encoding("gpt2").encode("Hello")
    [15496]
    >>> get_encoding("gpt3")
    Traceback (most recent call last):
    ...
    bytepair.errors.UnknownEncodingError: unknown encoding 'gpt3'; bundled encodings: gpt2, r50k_base, cl100k_base, o200k_base (for a tokenizer file use bytepair.load(path))
    """
    tok = _cache.get(name) if isinstance(name, str) else None
    if tok is not None:
        return tok
    _spec(name)
    with _lock:
        tok = _cache.get(name)
        if tok is None:
            tok = load_bundled(name, read_bundled_ranks(name))
            _cache[name] = tok
        return tok


def tiktoken_encoding(name: str) -> Any:
    """A real ``tiktoken.Encoding`` for a bundled encoding, built offline from
    bytepair's own (hash-checked) rank file: no download, no tiktoken cache. The
    reference that tests, benchmarks and ``bytepair bench`` compare against.

    Raises ImportError when tiktoken is not installed (``pip install tiktoken``).
    """
    import tiktoken

    spec = _spec(name)
    with _lock:
        enc = _tiktoken_cache.get(name)
        if enc is None:
            from .formats.tiktoken_ranks import parse_ranks

            tokens = parse_ranks(read_bundled_ranks(name), path=f"bytepair/data/{spec.file}")
            enc = tiktoken.Encoding(name=f"{name}-offline", pat_str=spec.pattern,
                                    mergeable_ranks={t: i for i, t in enumerate(tokens)},
                                    special_tokens=dict(spec.specials))
            _tiktoken_cache[name] = enc
        return enc


def encoding_name_for_model(model: str) -> str:
    """The encoding name an OpenAI model uses.

    >>> encoding_name_for_model("gpt-4o-2024-08-06")
    'o200k_base'
    >>> encoding_name_for_model("gpt-3.5-turbo")
    'cl100k_base'
    """
    if not isinstance(model, str):
        raise TypeError(f"model name must be a str, not {type(model).__name__}")
    if model in _MODELS:
        return _MODELS[model]
    for prefix, enc in _MODEL_PREFIXES:
        if model.startswith(prefix):
            return enc
    raise UnknownEncodingError(
        f"no bundled encoding is known for model {model!r}; use get_encoding() with one of"
        f" {', '.join(_SPECS)}"
    )


def encoding_for_model(model: str) -> Tokenizer:
    """The bundled encoding an OpenAI model uses.

    >>> encoding_for_model("gpt-4").name
    'cl100k_base'
    """
    return get_encoding(encoding_name_for_model(model))
