"""The Python package's layers, read from the source: the library never imports
a tool, no module imports itself through a cycle (imports inside functions
included; ``if TYPE_CHECKING:`` blocks excluded, as they never run), imports sit
at the top of a module unless they load an optional dependency, and modules stay
small. ARCHITECTURE.md's file table lists exactly the modules in the tree."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "python" / "bytepair"
ROOT = PKG.parents[1]

#: Subpackages that are tools: each may import the library and other tools, never be imported by the library.
TOOLS = ("inspect", "render", "cli", "serve", "distributed")
#: What may be imported inside a function: the optional extras, and standard
#: modules that exist on some platforms only (``resource``: Unix).
OPTIONAL = {"numpy", "matplotlib", "pyarrow", "ray", "starlette", "uvicorn", "rich", "tiktoken",
            "tokenizers", "transformers", "resource"}
#: Modules of bytepair's own that need an optional extra as soon as they are imported.
NEEDS_EXTRA = {"bytepair.serve", "bytepair.serve.app"}
MAX_PY_LINES = 600
MAX_RS_LINES = 700


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}
#: Modules that are not Python source: the compiled core.
COMPILED = {"bytepair._core"}


def is_tool(mod: str) -> bool:
    """Tools: the tool subpackages, and ``python -m bytepair`` (the CLI's entry)."""
    parts = mod.split(".")
    return len(parts) > 1 and (parts[1] in TOOLS or parts[1] == "__main__")


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(mod: str) -> list[tuple[str, int, bool]]:
    """``(imported module, line, inside a function)`` for every import of ``mod``
    that runs (not under ``if TYPE_CHECKING:``), resolved to module names."""
    path = MODULES[mod]
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking(child):
                continue
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                out.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    out.append((sub if sub in MODULES or sub in COMPILED else target, child.lineno, in_function))
            visit(child, nested)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


GRAPH = {m: sorted({t for t, _, _ in imports(m) if t in MODULES and t != m}) for m in MODULES}


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, []):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert cycles({"a": ["b"], "b": []}) == []


def test_no_import_cycle_between_modules():
    assert cycles(GRAPH) == []


def test_no_import_cycle_between_tool_packages():
    def package(m: str) -> str:
        parts = m.split(".")
        return ".".join(parts[:2]) if is_tool(m) else "bytepair(library)"

    packages: dict[str, set[str]] = {}
    for m, targets in GRAPH.items():
        packages.setdefault(package(m), set()).update(package(t) for t in targets if package(t) != package(m))
    assert cycles({k: sorted(v) for k, v in packages.items()}) == []


def test_the_library_never_imports_a_tool():
    bad = [f"{m} imports {t} (line {line})" for m in MODULES if not is_tool(m)
           for t, line, _ in imports(m) if t in MODULES and is_tool(t)]
    assert bad == []


def test_imports_inside_functions_are_optional_dependencies_only():
    bad = [f"{MODULES[m].relative_to(ROOT)}:{line}: {t}" for m in MODULES
           for t, line, inside in imports(m) if inside and t.split(".")[0] not in OPTIONAL and t not in NEEDS_EXTRA]
    assert bad == []


def test_modules_are_small():
    big = [f"{p.relative_to(ROOT)}: {n} lines" for p in PKG.rglob("*.py")
           if p.name != "reference.py" and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_PY_LINES]
    big += [f"{p.relative_to(ROOT)}: {n} lines" for p in (ROOT / "src").rglob("*.rs")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_RS_LINES]
    assert big == []


def test_architecture_lists_every_python_module():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("### Python (`python/bytepair/`)"):text.index("### Rust (`src/`)")]
    listed = {p for p in re.findall(r"`([\w/]+\.py)`", section) if not p.startswith("tests/")}
    listed |= {f"{d}{f}" for d, fs in re.findall(r"`([\w]+/)`[^|]*\|([^|]*)\|", section)
               for f in re.findall(r"`([\w]+\.py)`", fs)}
    actual = {str(p.relative_to(PKG)) for p in PKG.rglob("*.py")}
    assert sorted(actual - listed) == [], "modules missing from ARCHITECTURE.md"
    assert sorted(listed - actual) == [], "ARCHITECTURE.md lists modules that do not exist"


def test_no_module_is_named_like_a_public_function():
    """``bytepair.train`` is a function; a module ``bytepair/train.py`` would make
    ``import bytepair.train`` give the module and the attribute depend on import order."""
    import bytepair

    functions = {n for n in bytepair.__all__ if callable(getattr(bytepair, n)) and not isinstance(getattr(bytepair, n), type)}
    clashes = sorted(n for n in functions if (PKG / f"{n}.py").exists() or (PKG / n).is_dir())
    assert clashes == []


def test_the_package_installs_no_import_hook():
    code = ("import sys\nbefore = list(sys.meta_path)\nimport bytepair, bytepair.cli\n"
            "assert sys.meta_path == before, sys.meta_path\n")
    import bytepair

    where = str(Path(bytepair.__file__).resolve().parents[1])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": where})
    assert r.returncode == 0, r.stderr[-3000:]


def test_the_package_and_its_tools_import_without_any_extra():
    """A plain ``pip install .`` has none of the optional dependencies: every
    module but those that need an extra must still import (the CLI included)."""
    blocked = sorted(OPTIONAL - {"resource"})
    needed = sorted(m for m in MODULES if m not in NEEDS_EXTRA and not m.endswith("__main__"))
    code = (f"import sys\nfor name in {blocked!r}:\n    sys.modules[name] = None\n"
            f"import importlib\nfor m in {needed!r}:\n    importlib.import_module(m)\n"
            "from bytepair.cli import main\nassert main(['serve']) == 2\n")
    import bytepair  # the installed package (with its compiled core), wherever it is

    where = str(Path(bytepair.__file__).resolve().parents[1])
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": where})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "bytepair serve needs the serve extra" in r.stderr
