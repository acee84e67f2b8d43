"""The number-bounds sweep of the command line: every option that takes a
number, found by walking the argument parsers (an option with a ``type``) plus
the number-valued options parsed later (sizes, lists, ``TOKEN=ID``), is given
text, a negative number and 2**70 as a user types them. Each bad value is one
error line naming the flag the user typed, exit status 2, no traceback; a huge
value that cannot bind (a limit, a thread count) runs normally."""

from __future__ import annotations

import argparse
import base64
import re
from pathlib import Path

import pytest
from cli_run import bytepair_cli

from bytepair.cli import build_parser

#: A valid command line per command; the option under test is appended (argparse keeps the last value).
BASE = {
    "train": "train t.txt -q -o o.json",
    "extend": "extend -t tok.json t.txt --add 3 -o o.json",
    "count": "count -t tok.json t.txt",
    "truncate": "truncate -t tok.json --max-tokens 5 t.txt",
    "chunk": "chunk -t tok.json --max-tokens 10 t.txt",
    "pieces": "pieces -t tok.json t.txt",
    "trace": "trace --text abcabc",
    "diff": "diff gpt2 tok.json --text t.txt",
    "audit": "audit -t tok.json",
    "shrink": "shrink -t tok.json t.txt --keep 260 -o s.json",
    "convert": "convert tok.json hf --to transformers",
    "convert --special": "convert r.tiktoken c.json --to bytepair --pattern gpt2",
    "count-chunks": "count-chunks t.txt -o c.bpc --no-progress",
    "encode-dataset": "encode-dataset t.txt -e gpt2 -o ds --no-progress",
    "serve": "serve -e gpt2",
    "sweep": "sweep -t tok.json t.txt",
}
#: Options that act only with another one.
CONTEXT = {
    ("train", "--parity-global"): "--parity en=t.txt ko=t.txt",  # and no file: --parity names the text
    ("train", "--max-words"): "--superword 0.9 --vocab-size 280",
    ("train", "--superword"): "--vocab-size 280",
}
#: Number-valued options without a parser ``type`` (checked after parsing).
LATE = [("train", "--memory"), ("count-chunks", "--memory"), ("sweep", "--sizes"), ("sweep", "--merges"),
        ("convert", "--special")]
#: Options where a huge value is refused (else it cannot bind and the command succeeds).
HUGE_REFUSED = {("train", "--vocab-size"), ("extend", "--add"), ("extend", "--vocab-size"), ("chunk", "--overlap"),
                ("trace", "--merges"), ("sweep", "--sizes"), ("sweep", "--merges"), ("count-chunks", "--max-retries"),
                ("encode-dataset", "--max-retries"), ("serve", "--port"), ("train", "--superword"),
                ("train", "--memory"), ("count-chunks", "--memory"), ("shrink", "--keep"), ("shrink", "--min-count"),
                ("convert", "--special")}


def _numeric_options() -> list[tuple[str, str]]:
    found = []
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for cmd, sub in action.choices.items():
                for a in sub._actions:
                    if a.option_strings and a.type is not None and a.nargs is None and a.choices is None:
                        found.append((cmd, a.option_strings[-1]))
    return sorted(set(found) | set(LATE))


OPTIONS = _numeric_options()


def test_the_walk_finds_the_number_options():
    assert {("train", "--vocab-size"), ("shrink", "--keep"), ("serve", "--port"), ("count", "--limit")} <= set(OPTIONS)
    assert all(cmd in BASE for cmd, _ in OPTIONS), [o for o in OPTIONS if o[0] not in BASE]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("numbers")
    (d / "t.txt").write_text("hello world this is a test of the tokenizer\nanother line here\n" * 20)
    (d / "r.tiktoken").write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    r = bytepair_cli("train", "t.txt", "--vocab-size", "270", "-q", "-o", "tok.json", cwd=d)
    assert r.returncode == 0, r.stderr
    return d


def _argv(cmd: str, flag: str, value: str) -> list[str]:
    base = BASE.get(f"{cmd} {flag}", BASE[cmd])
    if flag == "--special":  # TOKEN=ID
        value = f"<|x|>={value}"
    if (cmd, flag) == ("extend", "--vocab-size"):
        base = base.replace("--add 3 ", "")
    if (cmd, flag) == ("train", "--parity-global"):
        base = base.replace(" t.txt", "")
    return [*base.split(), *CONTEXT.get((cmd, flag), "").split(), f"{flag}={value}"]


@pytest.mark.parametrize("value", ["abc", "-1", str(2**70)])
@pytest.mark.parametrize(("cmd", "flag"), OPTIONS, ids=[f"{c} {f}" for c, f in OPTIONS])
def test_number_option_bad_values(work, tmp_path, cmd, flag, value):
    if cmd == "serve" and value == str(2**70) and (cmd, flag) not in HUGE_REFUSED:
        pytest.fail("a server option that accepts a huge value would start a server here")
    for name in ("t.txt", "tok.json", "r.tiktoken"):
        (tmp_path / name).write_bytes((work / name).read_bytes())
    r = bytepair_cli(*_argv(cmd, flag, value), cwd=tmp_path, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    if value == str(2**70) and (cmd, flag) not in HUGE_REFUSED:
        assert r.returncode == 0, r.stderr[-1000:]
        return
    assert r.returncode == 2, (r.returncode, r.stderr[-1000:])
    errors = [line for line in r.stderr.strip().splitlines() if "error:" in line]
    assert len(errors) == 1 and r.stderr.strip().endswith(errors[0]), r.stderr
    assert re.search(rf"{re.escape(flag)}\b", errors[0]), errors[0]
