"""Unicode 16.0 for :mod:`bytepair.reference`, whatever ``regex`` release is installed.

The core reads patterns with ``regex-syntax`` 0.8.12 (Unicode 16.0, as tiktoken
0.14); the ``regex`` module follows the newest Unicode. So that the reference
splits exactly like the core, :func:`rewrite` turns a pattern, before ``regex``
compiles it, into one whose meaning no longer depends on ``regex``'s tables:

* every class the tables cover (``\\p{..}`` / ``\\P{..}`` with a general
  category, ``\\s``, ``\\d``, ``\\w`` and their negations, and bracketed classes
  made of them) becomes an explicit set of code-point ranges, read from
  ``data/unicode16.json`` (written by ``scripts/gen-unicode16.py`` from the
  core's own ``regex-syntax``);
* under ``(?i)`` each literal and class is closed under Unicode 16.0 simple case
  folding (the file's ``case_folds``) and the flag itself is removed, so
  ``regex``'s own folding never applies;
* ``.``, ``^`` and ``$`` are written out for the flags in force (``$`` without
  ``(?m)`` is the very end of the text, as in Rust; Python would also match
  before a final newline), and ``(?x)`` whitespace and comments are dropped.

A pattern using anything else that depends on the Unicode version (script
properties such as ``\\p{Greek}``, ``\\b``, backreferences under ``(?i)``,
nested or set-operation classes) is compiled with only its classes rewritten and
its flags left to ``regex``: those parts follow the installed ``regex`` release.
"""

from __future__ import annotations

import bisect
import json
from functools import cache, lru_cache
from importlib import resources
from typing import Dict, List, Optional, Tuple

Ranges = List[Tuple[int, int]]
MAX = 0x10FFFF

#: long and alternative names of the general categories (normalised: lower case,
#: no spaces, hyphens or underscores) and of the escapes, to the file's keys.
_ALIASES = {
    "letter": "L", "uppercaseletter": "Lu", "lowercaseletter": "Ll", "titlecaseletter": "Lt",
    "modifierletter": "Lm", "otherletter": "Lo", "casedletter": "LC", "l&": "LC",
    "mark": "M", "combiningmark": "M", "nonspacingmark": "Mn", "spacingmark": "Mc", "enclosingmark": "Me",
    "number": "N", "decimalnumber": "Nd", "letternumber": "Nl", "othernumber": "No",
    "punctuation": "P", "punct": "P", "connectorpunctuation": "Pc", "dashpunctuation": "Pd",
    "openpunctuation": "Ps", "closepunctuation": "Pe", "initialpunctuation": "Pi", "finalpunctuation": "Pf",
    "otherpunctuation": "Po", "symbol": "S", "mathsymbol": "Sm", "currencysymbol": "Sc",
    "modifiersymbol": "Sk", "othersymbol": "So", "separator": "Z", "spaceseparator": "Zs",
    "lineseparator": "Zl", "paragraphseparator": "Zp", "other": "C", "control": "Cc", "cntrl": "Cc",
    "format": "Cf", "privateuse": "Co", "unassigned": "Cn",
    "whitespace": "s", "wspace": "s", "space": "s",
}  # fmt: skip


class _Unsupported(Exception):
    """Raised inside :class:`_Rewriter` for syntax it does not translate."""


@lru_cache(maxsize=1)
def _data() -> dict:
    raw = resources.files(__package__).joinpath("data").joinpath("unicode16.json").read_text(encoding="utf-8")
    return json.loads(raw)


def _parse_spans(text: str) -> Ranges:
    out = []
    for item in text.split():
        lo, _, hi = item.partition("-")
        out.append((int(lo, 16), int(hi or lo, 16)))
    return out


@cache
def class_ranges(name: str) -> Tuple[Tuple[int, int], ...]:
    """The Unicode 16.0 ranges of a general category (``"L"``, ``"Lu"``, ...) or of
    ``"s"``, ``"d"``, ``"w"`` (``\\s``, ``\\d``, ``\\w``), as ``(first, last)`` pairs.

    >>> class_ranges("Lt")[:2]
    ((453, 453), (456, 456))
    """
    classes = _data()["classes"]
    if name not in classes:
        raise KeyError(f"no Unicode 16.0 table for class {name!r}; known: {', '.join(classes)}")
    return tuple(_parse_spans(classes[name]))


@lru_cache(maxsize=1)
def case_fold_groups() -> Tuple[Tuple[int, ...], ...]:
    """The groups of code points that ``(?i)`` treats as one (Unicode 16.0 simple case folding).

    >>> [chr(c) for c in next(g for g in case_fold_groups() if 0x73 in g)]
    ['S', 's', 'ſ']
    """
    return tuple(tuple(int(c, 16) for c in g.split(",")) for g in _data()["case_folds"].split())


def lookup(name: str) -> Optional[str]:
    """The table key for a property name as written in ``\\p{..}``, or None."""
    key = name.replace(" ", "").replace("_", "").replace("-", "").lower()
    for prefix in ("generalcategory=", "gc=", "category="):
        key = key.removeprefix(prefix)
    if key in _ALIASES:
        return _ALIASES[key]
    for short in _data()["classes"]:
        if len(short) <= 2 and short.lower() == key and short not in ("s", "d", "w"):
            return short
    return None


# ---------------------------------------------------------------- range sets


def _normalise(ranges: Ranges) -> Ranges:
    out: Ranges = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return out


def _negate(ranges: Ranges) -> Ranges:
    out: Ranges = []
    nxt = 0
    for lo, hi in _normalise(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX:
        out.append((nxt, MAX))
    return out


def _contains(ranges: Ranges, cp: int) -> bool:
    i = bisect.bisect_right(ranges, (cp, MAX + 1)) - 1
    return i >= 0 and ranges[i][0] <= cp <= ranges[i][1]


def _fold(ranges: Ranges) -> Ranges:
    """Closes a set under simple case folding (what ``(?i)`` does to a class)."""
    ranges = _normalise(ranges)
    extra = [(c, c) for g in case_fold_groups() if any(_contains(ranges, c) for c in g) for c in g]
    return _normalise(ranges + extra)


def _emit(ranges: Ranges) -> str:
    parts = []
    for lo, hi in _normalise(ranges):
        parts.append(f"\\U{lo:08X}" if lo == hi else f"\\U{lo:08X}-\\U{hi:08X}")
    if not parts:
        return "[^\\U00000000-\\U0010FFFF]"  # matches nothing, like an empty Rust class
    return "[" + "".join(parts) + "]"


# ---------------------------------------------------------------- the rewriter

_LITERAL_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07}
_CLASS_ESCAPES = {"s": "s", "d": "d", "w": "w"}


class _Rewriter:
    def __init__(self, pattern: str, full: bool):
        self.p = pattern
        self.i = 0
        self.full = full  # False: only rewrite classes, leave flags, '.', '^', '$' to regex
        self.flags = [{"i": False, "m": False, "s": False, "x": False}]
        self.out: List[str] = []

    @property
    def f(self) -> Dict[str, bool]:
        return self.flags[-1]

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def take(self) -> str:
        if self.i >= len(self.p):
            raise _Unsupported("unexpected end")
        c = self.p[self.i]
        self.i += 1
        return c

    # -- escapes: returns ("set", ranges) | ("lit", cp) | ("raw", text)
    def escape(self, in_class: bool):
        start = self.i - 1
        e = self.take()
        if e in "pP":
            negated = e == "P"
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise _Unsupported("unclosed \\p{")
                name = self.p[self.i + 1 : end]
                self.i = end + 1
            else:
                name = self.take()
            if name.startswith("^"):
                negated, name = not negated, name[1:]
            key = lookup(name)
            if key is None:
                if self.full:
                    raise _Unsupported(f"property {name!r}")
                return ("raw", self.p[start : self.i])
            return ("set", self.fold_negate(list(class_ranges(key)), negated))
        if e in "sSdDwW":
            return ("set", self.fold_negate(list(class_ranges(e.lower())), e.isupper()))
        if e in _LITERAL_ESCAPES:
            return ("lit", _LITERAL_ESCAPES[e])
        if e in "xuU":
            if self.peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise _Unsupported("unclosed \\x{")
                digits = self.p[self.i + 1 : end]
                self.i = end + 1
            else:
                n = {"x": 2, "u": 4, "U": 8}[e]
                digits = self.p[self.i : self.i + n]
                self.i += n
            try:
                return ("lit", int(digits, 16))
            except ValueError:
                raise _Unsupported("bad hex escape") from None
        if not in_class and e in "AbB":
            if e in "bB" and self.full:
                raise _Unsupported("word boundary (regex's \\w)")
            return ("raw", "\\" + e)
        if not in_class and e == "z":
            return ("raw", "\\Z")
        if e.isalnum():
            if self.full or in_class:
                raise _Unsupported(f"escape \\{e}")
            return ("raw", self.p[start : self.i])
        return ("lit", ord(e))

    def fold_negate(self, ranges: Ranges, negated: bool) -> Ranges:
        if self.full and self.f["i"]:
            ranges = _fold(ranges)
        return _negate(ranges) if negated else _normalise(ranges)

    def literal(self, cp: int) -> str:
        if self.full and self.f["i"]:
            folded = _fold([(cp, cp)])
            if folded != [(cp, cp)]:
                return _emit(folded)
        if cp < 0x80 and chr(cp).isalnum():
            return chr(cp)
        return f"\\U{cp:08X}"

    def bracket(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        items: Ranges = []
        first = True
        while True:
            c = self.take()
            if c == "]" and not first:
                break
            first = False
            if c == "[" or (c in "&-~" and self.peek() == c):
                raise _Unsupported("nested class or set operation")
            if c == "\\":
                kind, val = self.escape(in_class=True)
                if kind == "set":
                    items.extend(val)
                    continue
                lo = val
            else:
                lo = ord(c)
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                c2 = self.take()
                if c2 == "\\":
                    kind, hi = self.escape(in_class=True)
                    if kind != "lit":
                        raise _Unsupported("class in a range")
                elif c2 == "[":
                    raise _Unsupported("nested class")
                else:
                    hi = ord(c2)
                items.append((lo, hi))
            else:
                items.append((lo, lo))
        ranges = self.fold_negate(items, negated)
        return _emit(ranges)

    def group(self) -> str:
        # self.i is just after "("
        if self.peek() != "?":
            self.flags.append(dict(self.f))
            return "("
        self.i += 1
        c = self.peek()
        if c == "#":
            end = self.p.find(")", self.i)
            if end < 0:
                raise _Unsupported("unclosed comment")
            self.i = end + 1
            return ""
        for opener in (":", "=", "!", "<=", "<!", ">"):
            if self.p.startswith(opener, self.i):
                self.i += len(opener)
                self.flags.append(dict(self.f))
                return "(?" + opener
        if c == "P" or (c == "<" and self.peek(1) not in "=!"):
            end = self.p.find(">", self.i)
            if end < 0:
                raise _Unsupported("unclosed group name")
            text = self.p[self.i : end + 1]
            self.i = end + 1
            self.flags.append(dict(self.f))
            return "(?" + text
        flags = dict(self.f)
        on = True
        start = self.i
        while True:
            c = self.take()
            if c == "-":
                on = False
            elif c in "imsx":
                flags[c] = on
            elif c in ":)":
                break
            elif c != "u":
                raise _Unsupported(f"flag {c!r}")
        text = self.p[start : self.i - 1]
        if c == ")":
            self.flags[-1] = flags
            return "" if self.full else f"(?{text})"
        self.flags.append(flags)
        return "(?:" if self.full else f"(?{text}:"

    def run(self) -> str:
        p = self.p
        while self.i < len(p):
            c = self.take()
            if self.f["x"]:
                if c.isspace():
                    self.out.append("" if self.full else c)
                    continue
                if c == "#":
                    end = p.find("\n", self.i)
                    end = len(p) if end < 0 else end + 1
                    self.out.append("" if self.full else p[self.i - 1 : end])
                    self.i = end
                    continue
            if c == "\\":
                kind, val = self.escape(in_class=False)
                if kind == "set":
                    self.out.append(_emit(val))
                elif kind == "lit":
                    self.out.append(self.literal(val))
                else:
                    self.out.append(val)
            elif c == "[":
                self.out.append(self.bracket())
            elif c == "(":
                self.out.append(self.group())
            elif c == ")":
                if len(self.flags) > 1:
                    self.flags.pop()
                self.out.append(")")
            elif c in "|*+?":
                self.out.append(c)
            elif c == "{":
                end = p.find("}", self.i)
                if end < 0:
                    raise _Unsupported("unclosed repetition")
                self.out.append(p[self.i - 1 : end + 1])
                self.i = end + 1
            elif c == ".":
                self.out.append(_emit([(0, MAX)] if self.f["s"] else _negate([(0x0A, 0x0A)])))
            elif c == "^":
                self.out.append("(?m:^)" if self.f["m"] else "\\A")
            elif c == "$":
                self.out.append("(?m:$)" if self.f["m"] else "\\Z")
            elif not self.full:
                self.out.append(c)
            else:
                self.out.append(self.literal(ord(c)))
        return "".join(self.out)


@lru_cache(maxsize=64)
def rewrite(pattern: str) -> str:
    """The pattern with its Unicode-dependent parts pinned to Unicode 16.0 (see the
    module docstring), for ``regex.compile`` with no flags.

    >>> import regex
    >>> regex.findall(rewrite(r"(?i:'s)|\\p{Lu}+"), "'S'ſAB")
    ["'S", "'ſ", 'AB']
    >>> rewrite(r"a$")
    'a\\\\Z'
    """
    try:
        return _Rewriter(pattern, full=True).run()
    except _Unsupported:
        pass
    try:
        return _Rewriter(pattern, full=False).run()
    except _Unsupported:
        return pattern
