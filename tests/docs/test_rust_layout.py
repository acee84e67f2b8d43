"""docs/rust-layout.md against the source: the file map lists exactly the `.rs` files
under src/, the import table holds for every `use crate::...` in src/, and the error
table is the mapping in src/py/errors.rs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bytepair import errors

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "rust-layout.md").read_text(encoding="utf-8")
SRC = ROOT / "src"

if not SRC.is_dir():  # an installed package without the source tree
    pytest.skip("needs the source tree", allow_module_level=True)


def table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after `heading`, cells stripped."""
    lines = DOC.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[2:]  # after the header and the separator


MAP_ROW = re.compile(r"^( *)(\S+?(?:\.rs|/))(?:\s{2,}|$)")


def file_map() -> list[str]:
    """The paths the "File map" block names, one per row: `src/x/` opens a folder,
    an indented `y.rs` below it is `src/x/y.rs` (four spaces per level)."""
    block = DOC.split("## File map", 1)[1].split("\n## ", 1)[0]
    rows, folders = [], []
    for line in block.splitlines():
        if not line.startswith("    "):
            continue
        m = MAP_ROW.match(line[4:])
        if not m:
            continue
        depth, name = len(m.group(1)) // 4, m.group(2)
        if len(m.group(1)) % 4 or depth > len(folders):
            continue  # a description's continuation line
        folders = folders[:depth]
        path = "".join(folders) + name
        if name.endswith("/"):
            folders.append(name)
        else:
            rows.append(path)
    return rows


def test_file_map_is_the_tree():
    rows = file_map()
    assert len(rows) == len(set(rows)), "a file has two rows in docs/rust-layout.md's file map"
    tree = {str(p.relative_to(ROOT)) for p in SRC.rglob("*.rs")}
    assert sorted(set(rows) - tree) == [], "docs/rust-layout.md's file map names files that do not exist"
    assert sorted(tree - set(rows)) == [], "files missing from docs/rust-layout.md's file map"


def allowed_imports() -> dict[str, set[str]]:
    out = {}
    for module, may in table_rows("## Who may import whom"):
        name = module.strip("`")
        out[name] = set() if may.startswith("(") else {m.strip() for m in may.split(",")}
    return out


def code_lines(path: Path) -> str:
    """The file without comments (doc links may name any module)."""
    return "\n".join(line.split("//", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())


def test_every_module_has_a_row():
    modules = {p.stem if p.is_file() else p.name for p in SRC.iterdir() if p.name != "lib.rs"}
    assert modules == set(allowed_imports())


def test_imports_follow_the_table():
    allowed = allowed_imports()
    bad = []
    for module, may in allowed.items():
        files = [SRC / f"{module}.rs"] if (SRC / f"{module}.rs").exists() else sorted((SRC / module).rglob("*.rs"))
        for f in files:
            for used in set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", code_lines(f))):
                if used != module and used not in may:
                    bad.append(f"{f.relative_to(ROOT)} uses crate::{used}")
    assert not bad, "imports outside docs/rust-layout.md's table:\n" + "\n".join(bad)


def test_no_pyo3_outside_py():
    for f in SRC.rglob("*.rs"):
        if "py" not in f.relative_to(SRC).parts[:1]:
            assert "pyo3" not in code_lines(f), f


def test_error_table_is_the_mapping():
    variants = re.findall(r"^    ([A-Z]\w+)\s*[{(,]", (SRC / "error.rs").read_text(encoding="utf-8"), re.MULTILINE)
    to_py = code_lines(SRC / "py" / "errors.rs").split("fn to_py", 1)[1]
    mapping = {}  # each match arm's variant -> the first class name quoted in it
    for arm in re.split(r"(?=Error::\w+\s*(?:\{[^}]*\})?\s*=>)", to_py)[1:]:
        variant = re.match(r"Error::(\w+)", arm).group(1)  # type: ignore[union-attr]
        quoted = re.search(r'"([A-Z]\w+)"', arm)
        mapping[variant] = quoted.group(1) if quoted else None
    documented = {v.strip("`"): (cls.strip("`"), attrs) for v, cls, attrs, _ in table_rows("## Errors")}
    assert set(documented) == set(variants)
    for variant, (cls, attrs) in documented.items():
        if cls == "KeyboardInterrupt":
            continue
        assert mapping.get(variant) == cls, variant
        exc = getattr(errors, cls)
        assert cls in errors.__all__ and issubclass(exc, errors.BytepairError)
        for a in re.findall(r"`(\w+)`", attrs):
            assert hasattr(exc, a), f"{cls} has no class attribute {a!r}"
