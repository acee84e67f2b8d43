"""The ``bytepair`` executable run as a user types it (a fresh process per
command): flags that cannot apply are refused, errors are one line with exit
status 2 and name no Python exception type."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from conftest import DATA

_PYTHON_DIR = str(Path(bytepair.__file__).resolve().parent.parent)
_SCRIPT = shutil.which("bytepair", path=os.path.dirname(sys.executable))
_COMMAND = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "bytepair"]
#: Words that give away a Python exception type in a message.
_EXCEPTION_NAME = re.compile(r"\b\w*(Error|Exception)\b|Errno|Traceback")


def bytepair_cmd(*argv: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs ``bytepair ARGV...`` in a new process (this checkout's package first on the path)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_PYTHON_DIR, os.environ.get("PYTHONPATH", "")]),
               NO_COLOR="1", PYTHONWARNINGS="default")
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([*_COMMAND, *argv], input=data if data is not None else b"", capture_output=True,
                          env=env, cwd=cwd, timeout=300)


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    """Asserts a one-line user error (exit 2, no exception name) holding ``words``; returns it."""
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: "), err
    assert not _EXCEPTION_NAME.search(lines[0]), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def ok(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.fixture(scope="module")
def small_tiktoken(tmp_path_factory) -> Path:
    """A 300-id tokenizer (299 ranks, <|endoftext|> at 299) written as a .tiktoken file."""
    folder = tmp_path_factory.mktemp("small")
    tok = bytepair.train((DATA / "en_kjv.txt").read_text(encoding="utf-8"), 300, pattern="o200k",
                         special_tokens=["<|endoftext|>"], progress=False)
    bytepair.convert(tok, folder / "small.tiktoken", to="tiktoken")
    return folder / "small.tiktoken"


# ---------------------------------------------------------------- --preset


def test_preset_whose_specials_do_not_fit_the_file_is_refused(small_tiktoken, tmp_path):
    out = tmp_path / "x.json"
    line = refused(bytepair_cmd("convert", str(small_tiktoken), str(out), "--to", "hf", "--preset", "cl100k_base"),
                   "299 ranks", "100257-100276")
    assert "--pattern" in line and not out.exists()
    refused(bytepair_cmd("count", "-t", str(small_tiktoken), "--preset", "cl100k_base", "--text", "hi"),
            "299 ranks")
    # the way the message points to: the file's own pattern and specials
    ok(bytepair_cmd("convert", str(small_tiktoken), str(out), "--to", "hf", "--pattern", "o200k",
                    "--special", "<|endoftext|>=299"))
    assert bytepair.load(out).special_tokens == {"<|endoftext|>": 299} and bytepair.load(out).n_vocab == 300
