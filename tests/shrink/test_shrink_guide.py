"""docs/guides/shrink.md cannot drift: every ``python`` block runs, every
``bash`` block's ``bytepair ...`` commands run in-process, and what they print
must match the ``text`` block under them (``...`` matches anything)."""

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
GUIDE = ROOT / "docs" / "guides" / "shrink.md"
_FENCE = re.compile(r"^```(\w*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _cases():
    text = GUIDE.read_text(encoding="utf-8")
    blocks = [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)]
    cases = []
    for k, (lang, body, line) in enumerate(blocks):
        if lang in ("python", "bash"):
            expected = blocks[k + 1][1] if k + 1 < len(blocks) and blocks[k + 1][0] == "text" else None
            cases.append(pytest.param(lang, body, expected, id=f"shrink.md:{line}"))
    return cases


def _same(expected: str, got: str) -> bool:
    def norm(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines()) + "\n"

    return doctest.OutputChecker().check_output(norm(expected), norm(got), doctest.ELLIPSIS)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A scratch folder where ``tests/data`` is the committed excerpts."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_guide_has_examples():
    assert len(_cases()) >= 5


@pytest.mark.parametrize("lang, body, expected", _cases())
def test_guide_block(checkout, lang, body, expected):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if lang == "python":
            exec(compile(body, str(GUIDE), "exec"), {"__name__": "__guide__"})  # noqa: S102 - our guide
        else:
            for line in body.splitlines():
                if line.strip():
                    argv = shlex.split(line)
                    assert argv[0] == "bytepair", line
                    assert cli.main(argv[1:]) == 0, line
    if expected is not None:
        assert _same(expected, out.getvalue()), f"expected:\n{expected}\ngot:\n{out.getvalue()}"
