"""The bundled encodings: tiktoken's whole registry (gpt2, r50k_base, p50k_base,
p50k_edit, cl100k_base, o200k_base, o200k_harmony) and its model table.

The rank files ship gzipped inside the package (``bytepair/data/``) and are
checked at load against the sha256 values that tiktoken pins, so no network is
ever needed. Three encodings need no file of their own: ``p50k_base``'s rank
file is r50k's (the gpt2 file) plus 24 runs of 2 to 25 spaces at ranks 50257 to
50280; it is rebuilt from the gpt2 file at load and must hash to tiktoken's pin
for ``p50k_base.tiktoken``. ``p50k_edit`` is p50k_base with three FIM special
tokens, ``o200k_harmony`` o200k_base with gpt-oss's chat special tokens. The files are OpenAI's (MIT licence). Loading decompresses the file,
hashes it, and parses it in Rust (no Python object per token); the result is
cached per process.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from importlib import resources
from typing import Any, Dict, List, NamedTuple, Optional

from . import _core, patterns
from .errors import FormatError, UnknownEncodingError
from .special import ENDOFTEXT
from .tokenizer import Tokenizer

FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


class _Spec(NamedTuple):
    file: str
    sha256: str  # of the uncompressed file, as pinned by tiktoken
    pattern: str
    specials: Dict[str, int]
    #: the rank file is built from this bundled encoding's file (see _P50K_SPACES)
    derived_from: Optional[str] = None
    #: tiktoken's check: mergeable plus special tokens (when tiktoken states it)
    explicit_n_vocab: Optional[int] = None


#: p50k_base adds these tokens to r50k's ranks: runs of 2 to 25 spaces, ranks 50257..50280
#: (50256 stays <|endoftext|>). The result is checked against tiktoken's p50k_base pin.
_P50K_SPACES = [b" " * n for n in range(2, 26)]
_P50K_FIRST_RANK = 50257


_GPT2 = _Spec(
    "gpt2.tiktoken.gz",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    patterns.GPT2,
    {ENDOFTEXT: 50256},
    explicit_n_vocab=50257,
)
_P50K = _Spec(
    "gpt2.tiktoken.gz",
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    patterns.GPT2,
    {ENDOFTEXT: 50256},
    derived_from="gpt2",
    explicit_n_vocab=50281,
)
_O200K = _Spec(
    "o200k_base.tiktoken.gz",
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    patterns.O200K,
    {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
)
_HARMONY_SPECIALS: Dict[str, int] = {
    **_O200K.specials,
    "<|startoftext|>": 199998,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
    **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
}
_SPECS: Dict[str, _Spec] = {
    "gpt2": _GPT2,
    "r50k_base": _GPT2,
    "p50k_base": _P50K,
    "p50k_edit": _P50K._replace(
        specials={ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        explicit_n_vocab=None,
    ),
    "cl100k_base": _Spec(
        "cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        patterns.CL100K,
        {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
    ),
    "o200k_base": _O200K,
    "o200k_harmony": _O200K._replace(specials=_HARMONY_SPECIALS),
}

# tiktoken 0.14's model table (tiktoken/model.py), whole: exact names first, then
# prefixes in tiktoken's order (a dated, fine-tuned or deployment variant of a model).
_O2, _CL, _R50, _P50, _EDIT = "o200k_base", "cl100k_base", "r50k_base", "p50k_base", "p50k_edit"
_MODELS: Dict[str, str] = {
    # reasoning and chat
    "o1": _O2, "o3": _O2, "o4-mini": _O2, "gpt-5": _O2, "gpt-4.1": _O2, "gpt-4o": _O2,
    "gpt-4": _CL, "gpt-3.5-turbo": _CL, "gpt-3.5": _CL, "gpt-35-turbo": _CL,
    # base and embeddings
    "davinci-002": _CL, "babbage-002": _CL,
    "text-embedding-ada-002": _CL, "text-embedding-3-small": _CL, "text-embedding-3-large": _CL,
    # deprecated text, code and edit models
    "text-davinci-003": _P50, "text-davinci-002": _P50, "text-davinci-001": _R50,
    "text-curie-001": _R50, "text-babbage-001": _R50, "text-ada-001": _R50,
    "davinci": _R50, "curie": _R50, "babbage": _R50, "ada": _R50,
    "code-davinci-002": _P50, "code-davinci-001": _P50, "code-cushman-002": _P50,
    "code-cushman-001": _P50, "davinci-codex": _P50, "cushman-codex": _P50,
    "text-davinci-edit-001": _EDIT, "code-davinci-edit-001": _EDIT,
    # deprecated embeddings
    "text-similarity-davinci-001": _R50, "text-similarity-curie-001": _R50,
    "text-similarity-babbage-001": _R50, "text-similarity-ada-001": _R50,
    "text-search-davinci-doc-001": _R50, "text-search-curie-doc-001": _R50,
    "text-search-babbage-doc-001": _R50, "text-search-ada-doc-001": _R50,
    "code-search-babbage-code-001": _R50, "code-search-ada-code-001": _R50,
    # open source
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
_MODEL_PREFIXES = [
    ("o1-", _O2), ("o3-", _O2), ("o4-mini-", _O2), ("gpt-5", _O2), ("gpt-4.5-", _O2), ("gpt-4.1-", _O2),
    ("chatgpt-4o-", _O2), ("gpt-4o-", _O2), ("gpt-4-", _CL), ("gpt-3.5-turbo-", _CL), ("gpt-35-turbo-", _CL),
    ("gpt-oss-", "o200k_harmony"),
    ("ft:gpt-4o", _O2), ("ft:gpt-4", _CL), ("ft:gpt-3.5-turbo", _CL), ("ft:davinci-002", _CL),
    ("ft:babbage-002", _CL),
]

_cache: Dict[str, Tokenizer] = {}
_tiktoken_cache: Dict[str, Any] = {}
_lock = threading.Lock()


def list_encoding_names() -> List[str]:
    """Names accepted by :func:`get_encoding`.

    >>> list_encoding_names()
    ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base', 'o200k_harmony']
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
    where = f"bytepair/data/{spec.file}"
    if spec.derived_from is not None:
        check_sha256(data, _SPECS[spec.derived_from].sha256, where)
        data = p50k_ranks_from_r50k(data)
        where += f" (+ {name}'s space runs)"
    check_sha256(data, spec.sha256, where)
    return data


def p50k_ranks_from_r50k(r50k: bytes) -> bytes:
    """p50k_base's rank file from r50k_base's: the same lines plus one line per run of
    2 to 25 spaces, at ranks 50257 to 50280 (byte-exact: its sha256 is tiktoken's pin).

    >>> import hashlib
    >>> data = p50k_ranks_from_r50k(read_bundled_ranks("r50k_base"))
    >>> hashlib.sha256(data).hexdigest() == _SPECS["p50k_base"].sha256
    True
    """
    if not r50k.endswith(b"\n"):
        r50k += b"\n"
    extra = b"".join(
        base64.b64encode(tok) + b" " + str(_P50K_FIRST_RANK + i).encode() + b"\n" for i, tok in enumerate(_P50K_SPACES)
    )
    return r50k + extra


def _gap_tokens(data: bytes) -> List[bytes]:
    """The tokens of a rank file whose ranks leave gaps, in rank order, ``b""`` at
    each gap (the core's gap: never looked up; p50k_base's 50256 holds the
    special token ``<|endoftext|>``, as in tiktoken)."""
    ranks = {int(rank): base64.b64decode(tok) for tok, rank in (line.split() for line in data.splitlines() if line)}
    return [ranks.get(i, b"") for i in range(max(ranks) + 1)]


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
    if spec.derived_from is None:
        core = _core.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern)
    else:  # p50k: its ranks skip 50256, which only the core's constructor takes
        core = _core.CoreBPE(_gap_tokens(data), spec.specials, spec.pattern)
    return Tokenizer._from_core(core, spec.pattern, spec.specials, name=name, bundled=(get_encoding, name))


def get_encoding(name: str) -> Tokenizer:
    """One of the bundled encodings (loaded once per process; offline).

    The returned object is shared: use :meth:`Tokenizer.with_special_text` rather
    than setting ``special_text`` on it.

    >>> get_encoding("gpt2").encode("Hello")
    [15496]
    >>> get_encoding("gpt3")
    Traceback (most recent call last):
    ...
    bytepair.errors.UnknownEncodingError: unknown encoding 'gpt3'; bundled encodings: gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony (for a tokenizer file use bytepair.load(path))
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
            # tiktoken's own reading of a rank file: "base64 rank" lines, ranks as
            # written (p50k_base's skip 50256, which is <|endoftext|>)
            ranks = {base64.b64decode(tok): int(rank)
                     for tok, rank in (line.split() for line in read_bundled_ranks(name).splitlines() if line)}
            enc = tiktoken.Encoding(name=f"{name}-offline", pat_str=spec.pattern, mergeable_ranks=ranks,
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
