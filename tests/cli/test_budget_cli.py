"""``bytepair count --limit``, ``bytepair truncate`` and ``bytepair chunk``."""

from __future__ import annotations

import contextlib
import io
import itertools
import json

import bytepair
from bytepair.cli import main
from conftest import DATA, corpus


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_count_limit():
    path = str(DATA / "en_austen.txt")
    total = bytepair.get_encoding("o200k_base").count(corpus("en_austen.txt"))
    assert run(["count", "--limit", str(total), path]) == (0, f"{total}\n", "")
    code, out, _ = run(["count", "--limit", "10", path])
    assert (code, out) == (1, ">10\n")
    code, out, _ = run(["count", "--limit", "10", "--json", "-e", "gpt2", "-e", "cl100k_base", path])
    assert code == 1 and json.loads(out) == {"gpt2": {"tokens": 11, "limit": 10, "over_limit": True},
                                             "cl100k_base": {"tokens": 11, "limit": 10, "over_limit": True}}
    code, _, err = run(["count", "--limit", "-1", path])
    assert code == 2 and "--limit" in err


def test_truncate_both_sides():
    path = str(DATA / "ko_prose.txt")
    text = corpus("ko_prose.txt")
    enc = bytepair.get_encoding("cl100k_base")
    code, out, _ = run(["truncate", "-e", "cl100k_base", "--max-tokens", "40", path])
    assert code == 0 and out == enc.truncate_text(text, 40) and text.startswith(out)
    code, out, _ = run(["truncate", "-e", "cl100k_base", "--max-tokens", "40", "--side", "start", path])
    assert code == 0 and out == enc.truncate_text(text, 40, side="start") and text.endswith(out)
    code, out, _ = run(["truncate", "--max-tokens", "3", "--json", "--text", "one two three four"])
    assert json.loads(out) == {"text": "one two three", "tokens": 3, "chars": 13, "of_chars": 18}
    code, _, err = run(["truncate", "--max-tokens", "0", "--text", "x"])
    assert code == 2 and "--max-tokens" in err


def test_chunk_jsonl(tmp_path):
    path = str(DATA / "en_pydocs.txt")
    text = corpus("en_pydocs.txt")
    out_file = tmp_path / "chunks.jsonl"
    code, out, _ = run(["chunk", "-e", "cl100k_base", "--max-tokens", "512", "--overlap", "64", path,
                        "-o", str(out_file)])
    assert code == 0 and "chunks of at most 512 tokens" in out
    rows = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    enc = bytepair.get_encoding("cl100k_base")
    assert [r["index"] for r in rows] == list(range(len(rows)))
    assert all(r["text"] == text[r["start"]:r["end"]] and r["tokens"] == enc.count(r["text"]) <= 512 for r in rows)
    assert rows[0]["start"] == 0 and rows[-1]["end"] == len(text)
    assert all(b["start"] < a["end"] for a, b in itertools.pairwise(rows))  # overlapping
    # to stdout without -o
    code, out, _ = run(["chunk", "--max-tokens", "2", "--text", "a b c d e"])
    assert [json.loads(x)["text"] for x in out.splitlines()] == bytepair.get_encoding("o200k_base").chunk_text(
        "a b c d e", 2)
    for bad in (["--overlap", "-1"], ["--overlap", "8", "--max-tokens", "8"], ["--max-tokens", "0"]):
        argv = ["chunk", "--text", "abc"] + (bad if "--max-tokens" in bad else ["--max-tokens", "4"] + bad)
        code, _, err = run(argv)
        assert code == 2 and "bytepair: error:" in err
