"""Pre-tokenization patterns.

The named patterns are byte-for-byte the regular expressions of tiktoken's
encodings; the Rust core recognises these exact strings and runs hand-written
scanners for them. Any other string is compiled as a regular expression, and
``None`` means no pre-tokenization (each document is one chunk).
"""

from __future__ import annotations

import re
from typing import Optional

from . import _core
from .errors import PatternError

# Defined once, in the Rust core (src/pretok/mod.rs), which recognises these
# exact strings and runs its scanners for them.
GPT2: str = _core.NAMED_PATTERNS["gpt2"]
CL100K: str = _core.NAMED_PATTERNS["cl100k"]
O200K: str = _core.NAMED_PATTERNS["o200k"]

#: The spans of a superword tokenizer (:mod:`bytepair.superword`): no cut at
#: spaces; digits in groups of at most three; a cut after every run of
#: newlines and between ``:`` and a following space, newline or digit.
SUPERWORD: str = _core.SUPERWORD_PATTERN  # defined in src/pretok/patterns.rs, with a scanner and safe cuts

#: Short names accepted wherever a pattern is expected (case-insensitive).
NAMED = {
    "gpt2": GPT2,
    "r50k_base": GPT2,
    "cl100k": CL100K,
    "cl100k_base": CL100K,
    "o200k": O200K,
    "o200k_base": O200K,
    "superword": SUPERWORD,
}

#: Common other names of the same patterns (the models and encodings that use them).
ALIASES = {
    "r50k": "gpt2",
    "p50k": "gpt2",
    "p50k_base": "gpt2",
    "gpt3": "gpt2",
    "gpt4": "cl100k",
    "gpt-4": "cl100k",
    "gpt-3.5": "cl100k",
    "gpt-3.5-turbo": "cl100k",
    "gpt4o": "o200k",
    "gpt-4o": "o200k",
    "o1": "o200k",
}

_NAME_OF = {GPT2: "gpt2", CL100K: "cl100k", O200K: "o200k", SUPERWORD: "superword"}

# A string made only of letters, digits, "_", "-" and "." (and starting with a
# letter) is taken as a name: as a regex it would match only that literal word and
# leave the rest of the text to be chunked around it, which is never what was meant.
_NAME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*\Z")


def names() -> str:
    """The accepted pattern names, for messages."""
    return ", ".join([*NAMED, *ALIASES])


def resolve(pattern: Optional[str]) -> Optional[str]:
    """Turns a pattern name (or alias, any case) into its regex string; other
    strings are regexes and pass through, as does None (no pre-tokenization).

    A string that looks like a name but is none is an error listing the names, and
    so is the empty pattern (it matches nothing).

    >>> resolve("cl100k") == resolve("GPT4") == CL100K
    True
    >>> resolve(None) is None
    True
    >>> resolve("the")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bytepair.errors.PatternError: unknown pattern name 'the'; names: gpt2, r50k_base, cl100k, ...
    """
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str or None, not {type(pattern).__name__}")
    key = pattern.lower()
    key = ALIASES.get(key, key)
    if key in NAMED:
        return NAMED[key]
    if pattern == "":
        raise PatternError(
            "the empty pattern matches no text; use no pattern (None, or --pattern none) for no pre-tokenization"
        )
    if _NAME_LIKE.match(pattern):
        raise PatternError(
            f"unknown pattern name {pattern!r}; names: {names()} (a regex that is one literal word: "
            f"write it as (?:{pattern}))"
        )
    return pattern


def distinct_chunk_bytes(pattern: Optional[str], text: str) -> int:
    """UTF-8 bytes of the distinct chunks ``pattern`` cuts ``text`` into (each
    counted once): training and merge traces work on each distinct chunk, so
    this times the merges bounds their cost.

    >>> distinct_chunk_bytes("gpt2", "ab ab ab cd"), distinct_chunk_bytes(None, "ab ab")
    (8, 5)
    """
    pat = resolve(pattern)
    data = text.encode("utf-8", "surrogatepass")
    if pat is None:
        return len(data)
    spans = _core.pretokenize_spans(pat, text)
    return sum(len(c) for c in {data[s:e] for s, e in spans})


def name_of(pattern: Optional[str]) -> Optional[str]:
    """The short name of a built-in pattern string, or None.

    >>> name_of(GPT2)
    'gpt2'
    """
    if pattern is None:
        return None
    return _NAME_OF.get(pattern)
