"""Pre-tokenization patterns.

The named patterns are byte-for-byte the regular expressions of tiktoken's
encodings; the Rust core recognises these exact strings and runs hand-written
scanners for them. Any other string is compiled as a regular expression, and
``None`` means no pre-tokenization (each document is one chunk).
"""

from __future__ import annotations

from typing import Optional

from . import _core

# Defined once, in the Rust core (src/pretok/mod.rs), which recognises these
# exact strings and runs its scanners for them.
GPT2: str = _core.NAMED_PATTERNS["gpt2"]
CL100K: str = _core.NAMED_PATTERNS["cl100k"]
O200K: str = _core.NAMED_PATTERNS["o200k"]

#: Short names accepted wherever a pattern is expected.
NAMED = {
    "gpt2": GPT2,
    "r50k_base": GPT2,
    "cl100k": CL100K,
    "cl100k_base": CL100K,
    "o200k": O200K,
    "o200k_base": O200K,
}

_NAME_OF = {GPT2: "gpt2", CL100K: "cl100k", O200K: "o200k"}


def resolve(pattern: Optional[str]) -> Optional[str]:
    """Turns a pattern name into its regex string; other strings and None pass through.

    >>> resolve("cl100k") == CL100K
    True
    >>> resolve(None) is None
    True
    """
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, not {type(pattern).__name__}")
    return NAMED.get(pattern, pattern)


def name_of(pattern: Optional[str]) -> Optional[str]:
    """The short name of a built-in pattern string, or None.

    >>> name_of(GPT2)
    'gpt2'
    """
    if pattern is None:
        return None
    return _NAME_OF.get(pattern)
