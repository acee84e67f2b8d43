#!/usr/bin/env python3
"""Writes python/bytepair/data/unicode16.json: the character classes and the simple
case folding of Unicode 16.0 exactly as the core reads them, so that
``bytepair.reference`` splits like the core (and tiktoken 0.14) whatever Unicode
version the installed ``regex`` module has.

The source is the core's own ``regex-syntax`` (pinned to 0.8.12 in Cargo.toml,
Unicode 16.0), read through the private ``_core._unicode_class`` and
``_core._unicode_case_folds``; the Rust scanners build their tables from the same
crate. Run after changing that pin, then commit the file:

    scripts/dev-build.sh && PYTHONPATH=python python3 scripts/gen-unicode16.py

tests/reference/test_unicode16.py checks the file against the core on every code point.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from bytepair import _core

#: Classes the reference rewrites: general categories (short names) and \s, \d, \w.
CATEGORIES = [
    "L",
    "Lu",
    "Ll",
    "Lt",
    "Lm",
    "Lo",
    "LC",
    "M",
    "Mn",
    "Mc",
    "Me",
    "N",
    "Nd",
    "Nl",
    "No",
    "P",
    "Pc",
    "Pd",
    "Ps",
    "Pe",
    "Pi",
    "Pf",
    "Po",
    "S",
    "Sm",
    "Sc",
    "Sk",
    "So",
    "Z",
    "Zs",
    "Zl",
    "Zp",
    "C",
    "Cc",
    "Cf",
    "Co",
    "Cn",
]
ESCAPES = {"s": r"\s", "d": r"\d", "w": r"\w"}


def spans(ranges: list[tuple[int, int]]) -> str:
    return " ".join(f"{lo:X}" if lo == hi else f"{lo:X}-{hi:X}" for lo, hi in ranges)


def main() -> None:
    out = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent.parent / "python/bytepair/data/unicode16.json"
    )
    classes = {name: spans(_core._unicode_class(rf"\p{{{name}}}")) for name in CATEGORIES}
    classes.update({name: spans(_core._unicode_class(expr)) for name, expr in ESCAPES.items()})
    groups = sorted({tuple(members) for _, members in _core._unicode_case_folds()})
    doc = {
        "unicode": "16.0",
        "source": "regex-syntax 0.8.12 via bytepair._core (scripts/gen-unicode16.py)",
        "format": "classes: space-separated hex code points or first-last ranges; "
        "case_folds: space-separated groups of code points that (?i) treats as one, comma-separated",
        "classes": classes,
        "case_folds": " ".join(",".join(f"{cp:X}" for cp in g) for g in groups),
    }
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=0, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    print(f"wrote {out} ({out.stat().st_size:,} bytes, {len(classes)} classes, {len(groups)} case-fold groups)")


if __name__ == "__main__":
    main()
