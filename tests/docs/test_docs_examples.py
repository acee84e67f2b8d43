"""The README and the docs site cannot drift: every example block of README.md and
docs/**/*.md runs, and what it prints must match the output written under it
(``...`` matches anything, as in doctest).

- ``python`` blocks run; a ``text`` block right after one is its output.
- ``console`` blocks: each ``$ bytepair ...`` line runs in-process; the lines
  under it, up to the next ``$``, are its output.
- ``bash`` blocks: each line is a ``bytepair`` command, run in-process; a
  ``text`` block right after one is the output of all its commands.
- A block that cannot run here (it needs a server, a cluster, the network or a
  fresh environment) says so on the line before its fence:
  ``<!-- not run: the reason -->``. Nothing else is skipped: a block of a
  runnable language without that marker runs and must pass, and a fence that is
  indented (which this test would not see) fails the test.

Each block runs in a scratch folder where ``tests/data`` is the committed
excerpts; files a block writes are seen by its later commands only."""

from __future__ import annotations

import argparse
import contextlib
import doctest
import io
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from bytepair import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
RUNNABLE = {"python", "console", "bash"}
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_NOT_RUN = re.compile(r"<!--\s*not run:\s*(\S[^>]*?)\s*-->\s*$")


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _blocks(path: Path):
    """``(language, body, line, not_run_reason)`` of every fenced block, in order."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        reason = _NOT_RUN.search(before)
        out.append((m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1, reason and reason.group(1)))
    return out


def _cases(lang: str):
    cases = []
    for path in PAGES:
        blocks = _blocks(path)
        for k, (kind, body, line, reason) in enumerate(blocks):
            if kind != lang:
                continue
            expected = None
            if lang != "console" and k + 1 < len(blocks) and blocks[k + 1][0] == "text":
                expected = blocks[k + 1][1]
            marks = [pytest.mark.skip(reason=f"marked in the page: {reason}")] if reason else []
            cases.append(pytest.param(path, body, expected, id=f"{_name(path)}:{line}", marks=marks))
    return cases


def _same(expected: str, got: str) -> bool:
    norm = lambda s: "\n".join(line.rstrip() for line in s.strip("\n").splitlines()) + "\n"
    return doctest.OutputChecker().check_output(norm(expected), norm(got), doctest.ELLIPSIS)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A scratch folder that looks like the repository to relative paths
    (``tests/data`` links to the committed excerpts); files the examples write go here.
    A reader who runs an example in the checkout itself writes the same files
    there: each must be one the checkout's ``.gitignore`` covers."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    written = [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
               if p.is_file() and not p.is_symlink() and "tests/data" not in str(p.relative_to(tmp_path))]
    if written:
        ignored = subprocess.run(["git", "check-ignore", "--no-index", *written], cwd=ROOT, capture_output=True,
                                 text=True).stdout.split()
        missed = sorted(set(written) - set(ignored))
        assert not missed, f"examples write files .gitignore does not cover: {missed}"


@pytest.mark.parametrize("path, code, expected", _cases("python"))
def test_python_block(path, code, expected, checkout):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(path), "exec"), {"__name__": "__docs__"})  # noqa: S102 - our own pages
    if expected is not None:
        assert _same(expected, out.getvalue()), f"{_name(path)} shows:\n{expected}\nthe code prints:\n{out.getvalue()}"


def _commands(block: str):
    """``(command, expected output)`` for each ``$ `` line of a console block."""
    out = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif out:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines)) for cmd, lines in out]


def _run(command: str, checkout: Path) -> str:
    """Runs one ``bytepair`` command in-process; its standard output."""
    argv = shlex.split(command, comments=True)
    assert argv[0] == "bytepair", f"runnable commands are bytepair commands (else mark the block): {command}"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv[1:])
    assert code == 0, f"{command} failed: {err.getvalue()}"
    for opt, magic in (("--plot", b"\x89PNG"), ("--html", b"<!DOCTYPE html>")):
        if opt in argv:
            written = checkout / argv[argv.index(opt) + 1]
            assert written.read_bytes().startswith(magic), f"{command} did not write {written.name}"
    return out.getvalue()


@pytest.mark.parametrize("path, block, expected", _cases("console"))
def test_console_block(path, block, expected, checkout):
    commands = _commands(block)
    assert commands, f"{_name(path)}: a console block without a '$ ' line"
    for command, shown in commands:
        got = _run(command, checkout)
        assert _same(shown, got), f"$ {command}\n{_name(path)} shows:\n{shown}\nit prints:\n{got}"


@pytest.mark.parametrize("path, block, expected", _cases("bash"))
def test_bash_block(path, block, expected, checkout):
    commands = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands, f"{_name(path)}: an empty bash block"
    got = "".join(_run(command, checkout) for command in commands)
    if expected is not None:
        assert _same(expected, got), f"{_name(path)} shows:\n{expected}\nthe commands print:\n{got}"


def test_every_fence_is_seen():
    """A fence the parser misses (indented, or unclosed) would be a block nobody runs."""
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        indented = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"^\s+```", line)]
        assert not indented, f"{_name(path)}: indented fences at lines {indented}; start fences at column 0"
        fences = sum(1 for line in text.splitlines() if line.startswith("```"))
        assert fences == 2 * len(_blocks(path)), f"{_name(path)}: a fence without its pair"


def test_markers_name_a_reason_and_a_runnable_block():
    for path in PAGES:
        text = path.read_text(encoding="utf-8")
        marked = {b[2] for b in _blocks(path) if b[3]}
        for n, line in enumerate(text.splitlines(), 1):
            if "not run" in line and "<!--" in line:
                assert _NOT_RUN.search(line), f"{_name(path)}:{n}: write the marker as <!-- not run: REASON -->"
                assert n + 1 in marked, f"{_name(path)}:{n}: the marker must sit on the line before a fence"
        for kind, _, line, reason in _blocks(path):
            assert not reason or kind in RUNNABLE, f"{_name(path)}:{line}: only runnable blocks need a marker"


def test_set_up_commands_are_the_two_promised():
    text = README.read_text(encoding="utf-8")
    setup = text.split("## Set up and run", 1)[1].split("\n## ", 1)[0]
    bash = [body for lang, body, _, _ in _blocks(README) if lang == "bash" and body in setup]
    assert bash and bash[0].split("\n")[:2] == ["pip install .", "bytepair train"]
    assert '```bash\npip install ".[test]" && python -m pytest\n```' in text


def test_every_command_is_shown_running():
    """The docs show each CLI command at work, in a block the test runs."""
    shown = set()
    for path in PAGES:
        for lang, body, _, reason in _blocks(path):
            if reason:
                continue
            if lang == "console":
                shown |= {shlex.split(c)[1] for c, _ in _commands(body)}
            elif lang == "bash":
                shown |= {shlex.split(c)[1] for c in body.splitlines() if c.strip() and not c.startswith("#")}
    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = set(sub.choices) - shown
    # serve starts a server, so its blocks are marked as not run
    assert missing <= {"serve"}, f"commands no runnable block shows: {sorted(missing)}"


def test_the_checker_catches_drift():
    assert _same("a  1\n...\nz", "a  1\nb\nc\nz  \n")
    assert not _same("a  1", "a  2")
