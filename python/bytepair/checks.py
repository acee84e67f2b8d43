"""Argument checks shared by the library: each returns the checked value or
raises an error (a ``TypeError``, or a ``ValueError`` subclass from
:mod:`bytepair.errors`) that names the argument and what is wrong with it."""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Sequence, Type, TypeVar

from . import _core
from .errors import ArgumentError, BytepairError, ThreadsError, TrainingError, UnknownTokenError

T = TypeVar("T")

#: The largest vocabulary size: ids are 32-bit.
MAX_VOCAB = 2**32 - 1
#: The longest token training builds unless told otherwise (bytes): long enough
#: for every token of the bundled encodings (o200k_base's longest is 128 bytes),
#: short enough that a corpus of one repeated character cannot make tokens of
#: megabytes (a tokenizer file of gigabytes). ``max_token_length=None`` lifts it.
DEFAULT_MAX_TOKEN_LENGTH = 256
#: The largest count the core holds (counts are 64-bit): a larger bound on a
#: count cannot bind and is clamped to it.
MAX_COUNT = 2**64 - 1


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


def check_int(name: str, value: object, allow_none: bool = False, minimum: int = 1,
              clamp: int = MAX_COUNT) -> Optional[int]:
    """``value`` when it is an int of at least ``minimum`` (or None when allowed),
    else a TrainingError naming the argument. A value above ``clamp`` (a bound
    that cannot bind past it) is ``clamp``."""
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise TrainingError(f"{name} must be an int >= {minimum}{' or None' if allow_none else ''}, got {value!r}",
                            argument=name)
    return min(value, clamp)


def check_vocab_size(value: object, name: str = "vocab_size") -> int:
    """``value`` when it is an int of at most :data:`MAX_VOCAB` (the lower bound,
    256 + special tokens, is the caller's); else a TypeError or a TrainingError."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int")
    if value > MAX_VOCAB:
        raise TrainingError(f"{name} must be at most {MAX_VOCAB:,} (ids are 32-bit), got {value:,}", argument=name)
    return value


def check_range(name: str, value: object, low: int, high: int, *,
                error: Type[ValueError] = ArgumentError) -> int:
    """``value`` when it is an int in ``[low, high]``; else a TypeError (not an
    int) or ``error`` naming the argument and the range.

    >>> check_range("merges", 2**70, 1, 2000)
    Traceback (most recent call last):
    ...
    bytepair.errors.ArgumentError: merges must be between 1 and 2,000, got 1,180,591,620,717,411,303,424
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        msg = f"{name} must be between {low:,} and {high:,}, got {value:,}"
        if error is ArgumentError:
            raise ArgumentError(msg, name=name, low=low, high=high)
        if issubclass(error, BytepairError):
            raise error(msg, argument=name)
        raise error(msg)
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


def check_threads(num_threads: object, error: Type[ValueError] = ThreadsError) -> Optional[int]:
    """``num_threads`` when it is None or an int >= 1, clamped to
    ``bytepair._core.MAX_THREADS`` (4 per core: more threads only take turns,
    and results never depend on their number); else ``error``."""
    if num_threads is None:
        return None
    if not isinstance(num_threads, int) or isinstance(num_threads, bool) or num_threads < 1:
        if issubclass(error, BytepairError):
            raise error(f"num_threads must be a positive int or None, not {num_threads!r}", argument="num_threads")
        raise error(f"num_threads must be a positive int or None, not {num_threads!r}")
    return min(num_threads, _core.MAX_THREADS)


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


def call_on_ids(fn: Callable[..., T], ids: Any, n_vocab: int, *args: Any, each: Optional[Iterable[Any]] = None) -> T:
    """``fn(ids, *args)`` with the core's id errors made precise: an unknown id
    names the range of ids (or says it is a gap); an id that is not an int, or
    out of range, gets the error naming it. ``each``: the id lists to check
    (default ``[ids]``; a batch passes its lists)."""
    try:
        return fn(ids, *args)
    except UnknownTokenError as e:
        raise _with_range(e, n_vocab) from None
    except (OverflowError, TypeError):
        for one in [ids] if each is None else each:
            _raise_bad_ids(one, n_vocab)
        raise


def _with_range(e: UnknownTokenError, n_vocab: int) -> UnknownTokenError:
    """The core's unknown-id error with the range of ids added, as for negative ids."""
    msg = str(e)
    if "(ids are" in msg:
        return e
    inside = e.id is not None and 0 <= e.id < n_vocab
    out = UnknownTokenError(f"{msg} (a gap: no token holds that id)" if inside else f"{msg} (ids are 0..{n_vocab - 1})")
    out.id = e.id
    return out


def _raise_bad_ids(ids: Iterable[object], n_vocab: int) -> None:
    """Raises the precise error for the first id the core could not convert."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"token ids must be a sequence of int, not {type(ids).__name__}")
    for i in ids:
        if not hasattr(i, "__index__") or isinstance(i, float):
            raise TypeError(f"token ids are int, got {type(i).__name__} ({i!r})")
        v = i.__index__()  # type: ignore[attr-defined]
        if v < 0 or v >= n_vocab:
            raise UnknownTokenError(f"token id {v} is not in the vocabulary (ids are 0..{n_vocab - 1})")
