"""Witness texts for :func:`bytepair.inspect.audit`: the candidate texts that may
produce a token, and the UTF-8 facts that decide whether any text can.

A token's bytes occur in text only when they are a run of UTF-8 (up to three
continuation bytes, whole characters, the start of one character). Its
candidate texts are its text with probe characters around it or, when it holds
parts of characters, those characters completed in many ways; a second, wider
round puts one character of :data:`WIDE_CONTEXT` on each side.

>>> in_utf8_text("한".encode()[1:]), in_utf8_text(b"\\xff")
(True, False)
"""

from __future__ import annotations

import codecs
import itertools
from collections.abc import Sequence

#: Characters tried after (and before) a token's text when looking for a text
#: that emits it as a piece or produces it inside a longer piece.
PROBES = ("", " ", "x", "X", "0", "!", ".", ",", ";", ")", "}", "\n", "가", "s", "t", "m", "d")

#: Most texts tried per token when completing the partial characters at its ends.
MAX_COMPLETIONS = 96

#: The second round, for tokens the probes did not settle: a character on each side, from these.
WIDE_CONTEXT = tuple(chr(c) for c in range(0x20, 0x7F)) + ("\n", "\t", "\u00a0", "\u3000", "é", "ß", "가", "")

_CONT_SAMPLES = (0x80, 0x9F, 0xA0, 0xBF, 0x90, 0xB0, 0x88, 0xA8, 0x98, 0xB8)


def in_utf8_text(b: bytes) -> bool:
    """True when ``b`` occurs inside the UTF-8 encoding of some text: up to three
    continuation bytes, then valid UTF-8, then the start of one character."""
    k = 0
    while k < len(b) and k < 3 and 0x80 <= b[k] <= 0xBF:
        k += 1
    if k < len(b) and 0x80 <= b[k] <= 0xBF:
        return False  # four continuation bytes in a row
    dec = codecs.getincrementaldecoder("utf-8")()
    try:
        n = len(dec.decode(b[k:], final=False).encode("utf-8"))
    except UnicodeDecodeError:
        return False
    tail = b[k + n:]
    return not tail or bool(_tail_completions(tail))  # the decoder lets e.g. a surrogate's start pass


def first_bad_byte(b: bytes) -> str:
    """The first byte of ``b`` that UTF-8 never uses, as ``\\xNN``, or ``""``."""
    for x in b:
        if x in (0xC0, 0xC1) or x >= 0xF5:
            return f"\\x{x:02x}"
    return ""


def _split_partial(b: bytes) -> tuple[bytes, bytes, bytes]:
    """``b`` as (continuation bytes that end a character, whole characters,
    the start of a character); ``b`` must satisfy :func:`in_utf8_text`."""
    k = 0
    while k < len(b) and k < 3 and 0x80 <= b[k] <= 0xBF:
        k += 1
    rest = b[k:]
    dec = codecs.getincrementaldecoder("utf-8")()
    text = dec.decode(rest, final=False)
    n = len(text.encode("utf-8"))
    return b[:k], rest[:n], rest[n:]


def _lead_completions(head: bytes) -> list[bytes]:
    """Byte strings ``p`` such that ``p + head`` is one whole character (``head`` is
    1-3 continuation bytes), most common characters first."""
    out: list[bytes] = []
    k = len(head)
    for n in range(k + 1, 5):  # character length
        leads = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}[n]
        for lead in leads:
            for mid in itertools.product(_CONT_SAMPLES, repeat=n - k - 1):
                p = bytes([lead, *mid])
                try:
                    (p + head).decode("utf-8")
                except UnicodeDecodeError:
                    continue
                out.append(p)
    return out


def _tail_completions(tail: bytes) -> list[bytes]:
    """Byte strings ``s`` such that ``tail + s`` is one whole character (``tail`` is
    the start of a character): every possible next byte, then sampled ones."""
    lead = tail[0]
    n = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    missing = n - len(tail)
    out = []
    for first in range(0x80, 0xC0):
        for rest in itertools.product(_CONT_SAMPLES, repeat=missing - 1):
            s = bytes([first, *rest])
            try:
                (tail + s).decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(s)
    return out


def _spread(items: Sequence[bytes], n: int) -> list[bytes]:
    """At most ``n`` items, evenly spread over the list."""
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def candidates(b: bytes) -> list[str]:
    """Texts that may produce the token ``b``: its text with probe characters
    around it, or, when it holds parts of characters, those characters completed."""
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        s = None
    if s is not None:
        out = [s + y for y in PROBES] + [y + s for y in PROBES if y]
        return list(dict.fromkeys(out))
    head, middle, tail = _split_partial(b)
    heads = _lead_completions(head) if head else [b""]
    tails = _tail_completions(tail) if tail else [b""]
    per_side = max(1, int(MAX_COMPLETIONS ** 0.5)) if head and tail else MAX_COMPLETIONS
    texts: list[str] = []
    for p in _spread(heads, per_side):
        for q in _spread(tails, per_side):
            core = (p + head + middle + tail + q).decode("utf-8")
            texts.append(core)
            texts.append(" " + core)
    return list(dict.fromkeys(texts))


def wide_candidates(b: bytes) -> list[str]:
    """The second round: the token's text (or each completion of its partial
    characters) with one character of :data:`WIDE_CONTEXT` on each side."""
    try:
        cores = [b.decode("utf-8")]
    except UnicodeDecodeError:
        cores = [c for c in candidates(b) if not c.startswith(" ")][:8]
    return list(dict.fromkeys(a + core + z for core in cores for a in WIDE_CONTEXT for z in WIDE_CONTEXT))


__all__ = ["MAX_COMPLETIONS", "PROBES", "WIDE_CONTEXT", "candidates", "first_bad_byte", "in_utf8_text",
           "wide_candidates"]
