"""Exceptions raised by bytepair.

Every error about bad input subclasses a builtin (``ValueError`` or ``KeyError``)
so existing ``except ValueError`` code keeps working, and carries a message that
says what is wrong and how to fix it.

Errors raised by the Rust core also carry its facts as attributes (``rank``,
``path``, ``offset``, ...; ``None`` when not known), set in one place
(``src/py/errors.rs``), so code never has to read them out of the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import json


class BytepairError(Exception):
    """Base class of every bytepair exception.

    ``argument`` names the argument of the function called that the error is
    about (``"memory_limit"``, ``"text_column"`` ...) when there is one, so a
    caller such as the command line can point at its own spelling of it (the
    ``--memory`` flag) without reading the message; ``None`` otherwise.
    """

    argument: Optional[str] = None

    def __init__(self, *args: object, argument: Optional[str] = None) -> None:
        super().__init__(*args)
        if argument is not None:
            self.argument = argument

    def __reduce__(self) -> Tuple[Any, ...]:
        # rebuilt without calling ``__init__`` (whose signature differs per
        # class): the message and every attribute, ``argument`` included, cross
        # a pickle (worker processes, Ray tasks) unchanged
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls: type, args: Tuple[Any, ...], state: Dict[str, Any]) -> BaseException:
    e: BaseException = cls.__new__(cls, *args)  # type: ignore[call-overload]
    e.args = args
    e.__dict__.update(state)
    return e


class PatternError(BytepairError, ValueError):
    """A pre-tokenization pattern is not a valid regular expression, or the
    regex engine gave up on an input (``pattern``: the pattern, when known)."""

    pattern: Optional[str] = None
    reason: Optional[str] = None


class VocabError(BytepairError, ValueError):
    """A vocabulary or merge list is inconsistent (duplicates, gaps, missing bytes, ...).

    ``rank`` is the token (or special-token id) at fault, when there is one."""

    rank: Optional[int] = None
    reason: Optional[str] = None


class VocabSizeError(VocabError, AssertionError):
    """``Encoding(explicit_n_vocab=N)`` does not match the vocabulary given. Also
    an ``AssertionError``, which is what tiktoken raises for the same check."""


class DisallowedSpecialError(BytepairError, ValueError):
    """The text contains a special token that the caller did not allow (``token``)."""

    token: Optional[str] = None


class UnknownTokenError(BytepairError, KeyError):
    """A token id (``id``) is not in the vocabulary."""

    id: Optional[int] = None

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class UnknownEncodingError(BytepairError, ValueError, KeyError):
    """An encoding or model name that bytepair does not bundle. A ``ValueError``
    like tiktoken's ``get_encoding`` error and a ``KeyError`` like its
    ``encoding_for_model`` error, so either ``except`` keeps working."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class TrainingError(BytepairError, ValueError):
    """Training arguments or training data cannot work (empty corpus, vocab too small, ...).
    When what training would build passes ``memory_limit``, ``argument`` is
    ``"memory_limit"`` and, where the core estimated it, ``need`` and ``limit``
    are the bytes needed and allowed."""

    reason: Optional[str] = None
    need: Optional[int] = None
    limit: Optional[int] = None


class ReadError(TrainingError):
    """A training file cannot be read (``reason``) or is not UTF-8 (``offset``:
    the byte offset of the first invalid byte). ``path`` names the file."""

    path: Optional[str] = None
    offset: Optional[int] = None


class ThreadsError(BytepairError, ValueError):
    """A thread count that cannot be used (``threads``: 0, or more than the
    system can start; ``reason`` says which)."""

    threads: Optional[int] = None
    reason: Optional[str] = None


class ArgumentError(BytepairError, ValueError):
    """An argument outside the values it can take (``name``: the argument;
    ``low`` and ``high``: its range)."""

    def __init__(self, message: str, *, name: Optional[str] = None, low: Optional[int] = None,
                 high: Optional[int] = None) -> None:
        super().__init__(message, argument=name)
        self.name = name
        self.low = low
        self.high = high


class FormatError(BytepairError, ValueError):
    """A tokenizer file is malformed, truncated, of an unknown version or unsupported.

    Attributes:
        path: the file, when the error comes from one.
        where: line number or JSON path inside the file, when known.
        reason: the problem without the file and place (errors raised by the core).
    """

    where: object = None
    reason: Optional[str] = None

    def __init__(self, message: str, *, path: object = None, where: object = None) -> None:
        self.path = path
        self.where = where
        prefix = ""
        if path is not None:
            prefix = f"{path}"
            if where is not None:
                prefix += f" ({where})" if not isinstance(where, int) else f":{where}"
            prefix += ": "
        super().__init__(prefix + message)


class UnsupportedComponentError(FormatError):
    """A tokenizer file uses a component bytepair cannot represent exactly."""


class CorruptCountsError(FormatError):
    """The chunk counts of a ``.bpc`` file are damaged (``what``: how)."""

    what: Optional[str] = None


class ConversionError(FormatError):
    """A converted file does not give the same ids as the source tokenizer."""


class ShrinkError(BytepairError, ValueError):
    """``bytepair.shrink`` cannot work: no budget, a budget too small for what must
    stay, a token that is not in the vocabulary, counts of the wrong shape."""


class UsageError(BytepairError, ValueError):
    """A command-line mistake (no input, a bad option value, a binary file, ...)."""


class MissingExtraError(BytepairError, ImportError):
    """An optional dependency (an "extra" of the bytepair package) is not installed."""


class OutputIsInputError(BytepairError, ValueError):
    """An output path that is one of the inputs, or another output, of the same
    call (the same file, by device and inode): writing it would destroy data."""


class ShardError(BytepairError, ValueError):
    """One input shard cannot be read (not UTF-8, not valid JSONL or Parquet, no
    text column, ...). The message starts with the shard's path.

    Attributes:
        path: the shard.
    """

    def __init__(self, path: object, message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


def json_error_text(e: "json.JSONDecodeError", *, line: bool = True) -> str:
    """A JSON parse error as words: what is wrong, then where (``line`` False:
    the column only, for one-line documents such as a JSONL record).

    >>> import json
    >>> try:
    ...     json.loads('{"a": "x\\ty"}')
    ... except json.JSONDecodeError as e:
    ...     print(json_error_text(e))
    invalid control character at line 1, column 9
    """
    what = e.msg.removesuffix(" at")
    what = what[:1].lower() + what[1:]
    return f"{what} at line {e.lineno}, column {e.colno}" if line else f"{what} at column {e.colno}"


__all__ = [
    "ArgumentError",
    "BytepairError",
    "ConversionError",
    "CorruptCountsError",
    "DisallowedSpecialError",
    "FormatError",
    "MissingExtraError",
    "OutputIsInputError",
    "PatternError",
    "ReadError",
    "ShardError",
    "ShrinkError",
    "ThreadsError",
    "TrainingError",
    "UnknownEncodingError",
    "UnknownTokenError",
    "UnsupportedComponentError",
    "UsageError",
    "VocabError",
    "VocabSizeError",
]
