"""``bytepair diff`` and ``bytepair audit`` from the command line."""

from __future__ import annotations

import json

from bytepair import Tokenizer, get_encoding
from conftest import DATA
from conftest import run_cli as run


def test_diff_bundled_with_text(capsys):
    code, out, _ = run(capsys, "diff", "gpt2", "cl100k_base", "--text", str(DATA / "en_austen.txt"), "--json")
    assert code == 0
    d = json.loads(out)
    docs = [p for p in (DATA / "en_austen.txt").read_text(encoding="utf-8").split("\n\n") if p.strip()]
    assert len(d["documents"]) == len(docs)
    gpt2 = get_encoding("gpt2")
    assert [x["tokens_a"] for x in d["documents"]] == [len(gpt2.encode_ordinary(t)) for t in docs]
    code, out, _ = run(capsys, "diff", "gpt2", "cl100k_base", "--text", str(DATA / "ko_prose.txt"), "--limit", "2")
    assert code == 0 and "first cut differently at byte" in out and "text" in out


def test_diff_files(capsys, tmp_path):
    base = [bytes([i]) for i in range(256)]
    Tokenizer(base + [b"ab"], pattern=None).save(tmp_path / "a.json")
    Tokenizer(base + [b"cd"], pattern=None).save(tmp_path / "b.json")
    code, out, _ = run(capsys, "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json")
    d = json.loads(out)
    assert code == 0 and d["only_a"] == [{"text": "ab", "id": 256}] and d["only_b"] == [{"text": "cd", "id": 256}]
    assert d["a"] == "a.json" and d["b"] == "b.json"


def test_audit_json_and_corpus(capsys):
    code, out, _ = run(capsys, "audit", "-e", "gpt2", str(DATA / "en_austen.txt"), "--json")
    assert code == 0
    d = json.loads(out)
    assert d["counts"]["unreachable"] == 13 and len(d["unreachable"]) == 13
    assert d["corpus"]["tokens"] == len(get_encoding("gpt2").encode_ordinary((DATA / "en_austen.txt").read_text()))
    code, out, _ = run(capsys, "audit", "-e", "gpt2", "--limit", "2")
    assert code == 0 and "unreachable tokens (13; first 2)" in out and "corpus" not in out


def test_bad_input(capsys, tmp_path):
    code, _, err = run(capsys, "diff", "gpt2", "no-such")
    assert code == 2 and "'no-such' is neither a bundled encoding" in err and "Traceback" not in err
    bad = tmp_path / "bin.txt"
    bad.write_bytes(b"\xff\xfe")
    code, _, err = run(capsys, "diff", "gpt2", "gpt2", "--text", str(bad))
    assert code == 2 and "not UTF-8" in err
    code, _, err = run(capsys, "audit", "-e", "gpt2", "--limit", "-1")
    assert code == 2 and "--limit" in err
    code, _, err = run(capsys, "audit", "-e", "gpt2", "-e", "o200k_base")
    assert code == 2 and "one tokenizer" in err
