"""Checks that a built docs site's API reference shows the public API and only it.

    python scripts/check_api_docs.py SITE_DIR

Reads ``SITE_DIR/objects.inv`` (the Sphinx inventory mkdocstrings writes: four
header lines, then zlib-compressed lines ``name domain:role priority uri
dispname``) and fails (exit 1, one line per problem) when

* a name of ``bytepair.__all__`` has no entry ``bytepair.NAME``;
* a public attribute of ``bytepair.Tokenizer`` has no entry ``bytepair.Tokenizer.NAME``;
* an entry is rendered (its anchor names it) for a private name (a part that
  starts with ``_``, dunders aside) or for a name of :data:`INTERNAL`.

An entry whose anchor points elsewhere is an alias (how some module imports a
public object, e.g. ``import patterns as _patterns``): it renders nothing and is
not checked.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path
from typing import Dict, List

#: Names that are not API although their spelling is public, with the reason:
#: a module prefix here means nothing under it may be rendered.
INTERNAL = {
    # the modules behind bytepair.train / extend / shrink: their other functions
    # (counting_share, token_use, dropped_kinds, ...) are helpers for bytepair's
    # own tools; the API pages render the functions, reached as bytepair.NAME
    "bytepair.training.": "helpers of bytepair.train for bytepair's own tools",
    "bytepair.extending.": "helpers of bytepair.extend",
    "bytepair.shrinking.": "helpers of bytepair.shrink for bytepair's own tools",
}


def read_inventory(path: Path) -> Dict[str, str]:
    """``{name: anchor}`` of a Sphinx v2 inventory; the anchor is the name the
    entry's link points at (``$`` in the link stands for the entry's own name)."""
    data = path.read_bytes()
    parts = data.split(b"\n", 4)
    if len(parts) < 5 or parts[0].strip() != b"# Sphinx inventory version 2":
        raise ValueError(f"{path}: not a Sphinx inventory of version 2")
    out: Dict[str, str] = {}
    for line in zlib.decompress(parts[4]).decode("utf-8").splitlines():
        fields = line.split(" ", 4)
        if len(fields) < 4:
            continue
        name, uri = fields[0], fields[3]
        anchor = uri.partition("#")[2]
        out[name] = name if anchor in ("$", "") else anchor.replace("$", name)
    return out


def _private(name: str) -> bool:
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in name.split("."))


def problems(site_dir: Path, public: List[str], tokenizer_members: List[str]) -> List[str]:
    """What is wrong with ``site_dir``'s API reference, one line each (empty: none)."""
    inv = read_inventory(Path(site_dir) / "objects.inv")
    out = [f"bytepair.{n} (in bytepair.__all__) has no entry" for n in public if f"bytepair.{n}" not in inv]
    out += [f"bytepair.Tokenizer.{n} (a public attribute) has no entry"
            for n in tokenizer_members if f"bytepair.Tokenizer.{n}" not in inv]
    rendered = sorted({anchor for name, anchor in inv.items() if anchor == name})
    for name in rendered:
        if _private(name):
            out.append(f"{name} is private but rendered")
        for prefix, why in INTERNAL.items():
            if name.startswith(prefix):
                out.append(f"{name} is rendered but internal ({why})")
    return out


def check(site_dir: Path) -> List[str]:
    """:func:`problems` for the installed (or importable) bytepair."""
    import bytepair

    members = [n for n in dir(bytepair.Tokenizer) if not n.startswith("_")]
    return problems(Path(site_dir), list(bytepair.__all__), members)


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print("usage: check_api_docs.py SITE_DIR", file=sys.stderr)
        return 2
    found = check(Path(argv[0]))
    for p in found:
        print(f"api docs: {p}", file=sys.stderr)
    if not found:
        print("api docs: every public name has an entry; no private or internal one does")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
