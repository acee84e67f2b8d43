"""Argument checks shared by the library: each returns the checked value or
raises an error (a ``TypeError``, or a ``ValueError`` subclass from
:mod:`bytepair.errors`) that names the argument and what is wrong with it."""

from __future__ import annotations

from typing import List, Optional, Sequence

from .errors import TrainingError


def validate_specials(special_tokens: Sequence[str]) -> List[str]:
    """The special tokens as a list, or a TrainingError naming what is wrong
    (a lone str, a non-str, the empty string, a duplicate)."""
    if isinstance(special_tokens, str):
        raise TrainingError("special_tokens must be a list of str, not a single str")
    out: List[str] = []
    for s in special_tokens:
        if not isinstance(s, str):
            raise TrainingError(f"special token {s!r} is not a str")
        if not s:
            raise TrainingError("a special token is the empty string")
        if s in out:
            raise TrainingError(f"special token {s!r} is listed twice")
        out.append(s)
    return out


def check_int(name: str, value: object, allow_none: bool = False, minimum: int = 1) -> Optional[int]:
    """``value`` when it is an int of at least ``minimum`` (or None when allowed),
    else a TrainingError naming the argument."""
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise TrainingError(f"{name} must be an int >= {minimum}{' or None' if allow_none else ''}, got {value!r}")
    return value


def check_text(text: object) -> str:
    """``text`` itself when it is a str; a TypeError saying so otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}; decode bytes first")
    return text


def check_texts(texts: object) -> List[str]:
    if isinstance(texts, (str, bytes)):
        raise TypeError("expected a list of str; for one text use encode()")
    out = list(texts)  # type: ignore[call-overload]
    for t in out:
        check_text(t)
    return out


def check_threads(num_threads: object) -> Optional[int]:
    if num_threads is None:
        return None
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        raise ValueError(f"num_threads must be a positive int or None, not {num_threads!r}")
    return num_threads


def fix_surrogates(text: str) -> str:
    """Replaces lone surrogates with U+FFFD and joins surrogate pairs, as tiktoken does.

    >>> fix_surrogates("a" + chr(0xD800) + "b" + chr(0xD83D) + chr(0xDE00)) == "a\ufffdb\U0001f600"
    True
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
