"""bytepair.reference reads every pattern with Unicode 16.0, like the core and
tiktoken 0.14, whatever Unicode version the installed ``regex`` module has: its
classes and case folding come from data/unicode16.json, generated from the core's
own regex-syntax. Checked here on every code point, not on samples."""

from __future__ import annotations

import pytest
import regex

from bytepair import _core, unicode16
from bytepair import reference as R
from bytepair.patterns import CL100K, GPT2, O200K

ALL = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
CLASSES = list(unicode16._data()["classes"])


def core_chars(expr: str) -> str:
    return "".join(
        chr(c) for lo, hi in _core._unicode_class(expr) for c in range(lo, hi + 1) if not 0xD800 <= c < 0xE000
    )


def expr_of(name: str) -> str:
    return f"\\{name}" if name in ("s", "d", "w") else f"\\p{{{name}}}"


@pytest.mark.parametrize("name", CLASSES)
def test_table_is_the_cores(name):
    """The shipped table is what the core's regex-syntax gives today (a stale file
    after a change of the regex-syntax pin fails here: rerun scripts/gen-unicode16.py)."""
    assert list(unicode16.class_ranges(name)) == _core._unicode_class(expr_of(name))


def test_case_folds_are_the_cores():
    groups = {tuple(m) for _, m in _core._unicode_case_folds()}
    assert set(unicode16.case_fold_groups()) == groups
    assert len(groups) > 1000


@pytest.mark.parametrize(
    "name, negated",
    [(n, False) for n in ("L", "N", "s", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "P", "S", "Z", "d", "w")]
    + [("L", True), ("s", True), ("w", True)],
)
def test_every_code_point_through_regex(name, negated):
    """The compiled reference pattern, run by the installed regex module over all
    1,112,064 code points, matches exactly the core's class."""
    expr = expr_of(name)
    if negated:
        expr = expr.upper() if name in ("s", "d", "w") else expr.replace("\\p", "\\P")
    got = "".join(regex.findall(unicode16.rewrite(expr), ALL))
    assert got == core_chars(expr)


def test_bracketed_negation_and_case_folding_on_every_code_point():
    for expr in (
        r"[^\s\p{L}\p{N}]",
        r"[^\r\n\p{L}\p{N}]",
        r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
        r"(?i)[a-z\u00e0]",
        r"(?i:[^k])",
        r"(?i)\p{Lu}",
        r"(?i)\P{Ll}",
        r"[\d\-x-z]",
        r"(?i:s)",
        r"(?i:ǅ)",
        "(?i)\u212a",
    ):
        assert "".join(regex.findall(unicode16.rewrite(expr), ALL)) == core_chars(expr), expr


def test_case_folding_of_every_cased_code_point():
    """(?i) on each character that has case partners matches exactly its Unicode 16.0
    partners among every code point that has any (regex's own folding is not used)."""
    cased = sorted({c for g in unicode16.case_fold_groups() for c in g})
    text = "".join(map(chr, cased))
    for cp in cased[::3]:
        expr = f"(?i)\\x{{{cp:X}}}"
        assert "".join(regex.findall(unicode16.rewrite(expr), text)) == core_chars(expr), hex(cp)


@pytest.mark.parametrize("pattern", [GPT2, CL100K, O200K], ids=["gpt2", "cl100k", "o200k"])
def test_named_patterns_split_every_code_point_like_the_core(pattern):
    cps = ALL[::3]
    for text in (cps, "".join(c + "a'S " for c in ALL[::11]), ":\U0003d000", "::\U0003d000"):
        assert R.pretokenize(text, pattern) == _core.pretokenize(pattern, text)


CUSTOM = [
    r"\w+|\W",
    r"(?i)[a-zß]+|.",
    r"(?x) \p{Lu} + | [^\p{Lu}]  # a comment (with a paren",
    r".+$|\n",
    r"(?m)^\d+$|\D",
    r"(?s).{1,3}",
    r"[^\p{L}\s]+|\s+|\p{L}+",
    r"\P{N}+|\p{N}",
    r"(?i:ab|k)+|[^abk]",
    r"\p{Letter}+|\p{gc=Nd}+|\p{Uppercase_Letter}|[\s\S]",
    r"'(?i:s|t)|\pL+|\PL",
]
TEXTS = [
    "It's the KELVIN \u212a sign, ſ and ß; 123 4567\n\nx\n",
    "대한민국은 민주공화국이다.\n",
    "".join(chr(c) for c in (0x295, 0x88F, 0xC5C, 0x1ACF, 0xA7CE, 0xA7CF, 0x10940, 0x16EA0, 0x1E6E3, 0x3D000, 0x323B0)),
    ALL[::97],
]


@pytest.mark.parametrize("pattern", CUSTOM)
def test_custom_patterns_split_like_the_core(pattern):
    for text in TEXTS:
        assert R.pretokenize(text, pattern) == _core.pretokenize(pattern, text), (pattern, text[:40])
