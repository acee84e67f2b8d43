"""The real ``bytepair`` executable given what a hostile user types: each case
is one line on stderr and exit status 2, never a Rust panic, an abort or a
traceback."""

from __future__ import annotations

import base64

from cli_run import bytepair_cli


def one_line_error(r) -> str:
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error:"), r.stderr[-2000:]
    return lines[0]


def test_huge_rank_in_a_tiktoken_file(tmp_path):
    """A 2.8 KB rank file with one huge rank: refused, not a 50 GB allocation."""
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    path = tmp_path / "huge.tiktoken"
    path.write_text("\n".join(lines + [f"{base64.b64encode(b'ab').decode()} {2**31}"]) + "\n")
    msg = one_line_error(bytepair_cli("encode", "-t", str(path), "--pattern", "gpt2", "--text", "ab", cwd=tmp_path))
    assert "2,147,483,648" in msg and "huge.tiktoken" in msg


def test_empty_special_token(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("héllo wörld, ünïcödé text " * 50, encoding="utf-8")
    for cmd in (["train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json")],
                ["count-chunks", str(corpus), "-o", str(tmp_path / "c.bpc")]):
        msg = one_line_error(bytepair_cli(*cmd, "--special", "", cwd=tmp_path))
        assert "empty" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_memory_of_400_digits(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world " * 50, encoding="utf-8")
    msg = one_line_error(bytepair_cli("train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json"),
                                      "--memory", "9" * 400 + "GB", cwd=tmp_path))
    assert "memory" in msg
