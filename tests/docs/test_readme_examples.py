"""The README cannot drift: every Python block runs, every ``console`` block's
``$ bytepair ...`` commands run in-process, and what they print must match the
output written under them (``...`` matches anything, as in doctest)."""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex
from pathlib import Path

import pytest

from bytepair import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
_FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _blocks():
    """``(language, body, line)`` of every fenced block, in order."""
    text = README.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)]


def _python_cases():
    blocks = _blocks()
    cases = []
    for k, (lang, body, line) in enumerate(blocks):
        if lang != "python":
            continue
        expected = None
        if k + 1 < len(blocks) and blocks[k + 1][0] == "text":
            expected = blocks[k + 1][1]
        cases.append(pytest.param(body, expected, id=f"README.md:{line}"))
    return cases


def _console_cases():
    return [pytest.param(body, id=f"README.md:{line}") for lang, body, line in _blocks() if lang == "console"]


def _same(expected: str, got: str) -> bool:
    norm = lambda s: "\n".join(line.rstrip() for line in s.strip("\n").splitlines()) + "\n"
    return doctest.OutputChecker().check_output(norm(expected), norm(got), doctest.ELLIPSIS)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A scratch folder that looks like the repository to relative paths
    (``tests/data`` links to the committed excerpts); files the examples write go here."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("code, expected", _python_cases())
def test_python_block(code, expected, checkout):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})  # noqa: S102 - our README
    if expected is not None:
        assert _same(expected, out.getvalue()), f"README shows:\n{expected}\nthe code prints:\n{out.getvalue()}"


def _commands(block: str):
    """``(command, expected output)`` for each ``$ `` line of a console block."""
    out = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif out:
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines)) for cmd, lines in out]


@pytest.mark.parametrize("block", _console_cases())
def test_console_block(block, checkout):
    for command, expected in _commands(block):
        argv = shlex.split(command)
        assert argv[0] == "bytepair", f"walkthrough commands are bytepair commands: {command}"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv[1:])
        assert code == 0, f"{command} failed: {err.getvalue()}"
        assert _same(expected, out.getvalue()), f"$ {command}\nREADME shows:\n{expected}\nit prints:\n{out.getvalue()}"
        for opt, magic in (("--plot", b"\x89PNG"), ("--html", b"<!DOCTYPE html>")):
            if opt in argv:
                written = checkout / argv[argv.index(opt) + 1]
                assert written.read_bytes().startswith(magic), f"{command} did not write {written.name}"


def test_set_up_commands_are_the_two_promised():
    text = README.read_text(encoding="utf-8")
    setup = text.split("## Set up and run", 1)[1].split("\n## ", 1)[0]
    bash = [body for lang, body, _ in _blocks() if lang == "bash" and body in setup]
    assert bash and bash[0].split("\n")[:2] == ["pip install .", "bytepair train"]
    assert {c.split()[1] for b in _console_cases() for c, _ in _commands(b.values[0])} >= {
        "train", "encode", "count", "pieces", "trace", "sweep", "ranks", "compare", "evaluate", "convert",
        "bench", "decode"}


def test_the_checker_catches_drift():
    assert _same("a  1\n...\nz", "a  1\nb\nc\nz  \n")
    assert not _same("a  1", "a  2")
