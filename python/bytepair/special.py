"""Special tokens: the argument types of tiktoken's ``allowed_special`` /
``disallowed_special`` and :class:`SpecialPolicy`, the one value they resolve to.

Special-token text becomes its id only when it is allowed; disallowed text
raises :class:`~bytepair.errors.DisallowedSpecialError` (tiktoken's default);
any other text is plain text.

One default for every entry point of the library (``Tokenizer.encode`` and
every other ``Tokenizer`` method with these arguments, ``encode_files``, the
functions of :mod:`bytepair.budget`): ``allowed_special=NO_SPECIALS`` and
``disallowed_special=None``, where ``None`` means the tokenizer's
``special_text``: ``"raise"`` (the default) is tiktoken's
``disallowed_special="all"``, so special-token text raises; a tokenizer built
with ``special_text="text"`` encodes it as plain text instead. The inspection
tools (:mod:`bytepair.inspect`) and ``bytepair.distributed.encode_dataset``
differ on purpose and say so: they read corpora, where the text of a special
token is data, and default to plain text.

>>> p = resolve({"<|endoftext|>": 50256}, "raise", "all", None)
>>> p.allowed, p.disallowed, p.plain
(('<|endoftext|>',), (), False)
"""

from __future__ import annotations

import collections.abc
from dataclasses import dataclass, field
from typing import AbstractSet, Collection, List, Literal, Mapping, Optional, Tuple, Union

from .errors import DisallowedSpecialError

ENDOFTEXT = "<|endoftext|>"

#: What ``encode`` does by default with special-token text that is not allowed:
#: ``"raise"`` (tiktoken's behaviour) or ``"text"`` (encode it as ordinary text).
SpecialText = Literal["raise", "text"]

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str], None]

#: ``allowed_special``'s default (tiktoken's): no special token allowed.
NO_SPECIALS: AbstractSet[str] = frozenset()


def nothing_allowed(allowed_special: object) -> bool:
    """True for :data:`NO_SPECIALS` and any other empty set (``set()``,
    ``frozenset()``): the calls that allow no special token."""
    return allowed_special is NO_SPECIALS or (isinstance(allowed_special, collections.abc.Set) and not allowed_special)


@dataclass(frozen=True)
class SpecialPolicy:
    """How one call treats special-token text: names in ``allowed`` become their
    ids, names in ``disallowed`` raise, all other text is plain text.

    ``every_disallowed`` marks tiktoken's default (nothing allowed, every
    special token disallowed), which the core applies without name lists.
    """

    allowed: Tuple[str, ...] = ()
    disallowed: Tuple[str, ...] = ()
    every_disallowed: bool = False
    #: The core's ``(allowed, disallowed)`` arguments: ``(None, None)`` for
    #: tiktoken's default, name lists otherwise (built once: calls pass it as is).
    core_args: Tuple[Optional[List[str]], Optional[List[str]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        args = (None, None) if self.every_disallowed else (list(self.allowed), list(self.disallowed))
        object.__setattr__(self, "core_args", args)

    @property
    def plain(self) -> bool:
        """True when no special token is recognised (the text is all plain text)."""
        return not (self.allowed or self.disallowed or self.every_disallowed)


#: The policy that recognises no special token.
PLAIN = SpecialPolicy()


def resolve(
    specials: Mapping[str, int],
    special_text: SpecialText,
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
) -> SpecialPolicy:
    """The policy of tiktoken's arguments for a tokenizer with these special
    tokens and default (``special_text``).

    >>> resolve({"<s>": 3}, "raise", NO_SPECIALS, None).every_disallowed
    True
    >>> resolve({"<s>": 3}, "text", NO_SPECIALS, None).plain
    True
    """
    if nothing_allowed(allowed_special) and (disallowed_special is None or disallowed_special == "all"):
        if not specials or (disallowed_special is None and special_text == "text"):
            return PLAIN
        return SpecialPolicy(every_disallowed=True)
    if allowed_special == "all":
        allowed = set(specials)
    else:
        if isinstance(allowed_special, str):
            raise TypeError("allowed_special must be 'all' or a set of str, not a str")
        allowed = set(allowed_special)
    if disallowed_special is None:
        disallowed_special = "all" if special_text == "raise" else ()
    if disallowed_special == "all":
        disallowed = set(specials) - allowed
    else:
        if isinstance(disallowed_special, str):
            raise TypeError("disallowed_special must be 'all' or a collection of str, not a str")
        disallowed = set(disallowed_special)
    allowed &= specials.keys()
    disallowed &= specials.keys()
    if not allowed and not disallowed:
        return PLAIN
    return SpecialPolicy(tuple(sorted(allowed)), tuple(sorted(disallowed)))


def check_foreign_disallowed(text: str, disallowed_special: DisallowedSpecial, specials: Mapping[str, int]) -> None:
    """Raises when ``text`` holds a disallowed string that is not a special token
    (tiktoken searches the text for every disallowed string, special or not)."""
    if disallowed_special is None or disallowed_special == "all":
        return
    for s in disallowed_special:
        if s not in specials and s and s in text:
            raise DisallowedSpecialError(
                f"Encountered text corresponding to disallowed special token {s!r}.\n"
                "Remove it from `disallowed_special` to encode it as normal text."
            )


__all__ = ["ENDOFTEXT", "NO_SPECIALS", "PLAIN", "AllowedSpecial", "DisallowedSpecial", "SpecialPolicy", "SpecialText",
           "check_foreign_disallowed", "nothing_allowed", "resolve"]
