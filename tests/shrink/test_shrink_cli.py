"""``bytepair shrink`` from the command line: outputs, the report, errors."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import bytepair
from bytepair.cli import main
from bytepair.shrinking import shrink, token_use
from conftest import DATA
from conftest import run_cli as run


@pytest.fixture()
def corpus_dir(tmp_path):
    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    shutil.copy(DATA / "ko_prose.txt", d / "ko.txt")
    shutil.copy(DATA / "code_python.txt", d / "sub" / "code.py")
    (d / ".hidden").write_text("ignored: Ελληνικά κείμενα", encoding="utf-8")
    return d


def test_shrink_folder_writes_tokenizer_and_id_map(capsys, tmp_path, corpus_dir):
    out, idm = tmp_path / "small.json", tmp_path / "map.npy"
    code, text, err = run(capsys, "shrink", "-e", "o200k_base", str(corpus_dir), "--keep", "4000",
                          "-o", str(out), "--id-map", str(idm))
    assert code == 0, err
    small = bytepair.load(out)
    id_map = np.load(idm)
    assert small.n_vocab == 4000 and id_map.shape == (4000,) and id_map.dtype == np.int64
    # the same as the API on the same documents (the hidden file is skipped)
    base = bytepair.get_encoding("o200k_base")
    docs = [corpus_dir / "ko.txt", corpus_dir / "sub" / "code.py"]
    want, want_map = shrink(base, docs, keep=4000)
    assert (id_map == want_map).all() and small == want
    before = int(token_use(base, docs).sum())
    after = int(token_use(small, docs).sum())
    assert "kept 4,000 of 200,019 tokens (3,998 mergeable + 2 special)" in text
    assert f"{before:,} tokens before, {after:,} after" in text
    assert "bytes per token:" in text and "dropped 196,000 tokens: Latin" in text
    assert "whitespace runs" in text and "digits" in text and "punctuation and symbols" in text


def test_shrink_json_report_and_options(capsys, tmp_path, corpus_dir):
    out = tmp_path / "small.tiktoken"
    code, text, err = run(capsys, "shrink", "-e", "cl100k_base", str(corpus_dir / "ko.txt"), "--text", "def f(): pass",
                          "--min-count", "2", "--keep-token", " tokenizer", "--keep-token", "#15339",
                          "--strategy", "count", "--to", "tiktoken", "-o", str(out), "--json")
    assert code == 0, err
    r = json.loads(text)
    assert r["base"] == "cl100k_base" and r["strategy"] == "count" and r["corpus_files"] == 1
    assert r["tokens_after"] >= r["tokens_before"] and r["bytes_per_token_before"] > 1
    assert r["dropped"] == sum(r["dropped_kinds"].values()) == 100256 - r["mergeable"]
    back = bytepair.load(out, pattern="cl100k")
    assert back.n_vocab == len(back.mergeable_ranks) == r["mergeable"]
    assert len(back.encode(" tokenizer")) == 1 and back.decode(back.encode("hello")) == "hello"


def test_shrink_tokenizer_file(capsys, tmp_path):
    base = bytepair.train(bytepair.cli.common.sample_path(), 600, special_tokens=["<|endoftext|>"])
    base.save(tmp_path / "base.json")
    code, _text, err = run(capsys, "shrink", "-t", str(tmp_path / "base.json"), "--text", "the the the and",
                          "--keep", "300", "-o", str(tmp_path / "s.json"))
    assert code == 0, err
    assert bytepair.load(tmp_path / "s.json").n_vocab == 300


@pytest.mark.parametrize("argv, message", [
    (["--text", "x"], "give --keep N"),
    (["--keep", "4000"], "no corpus"),
    (["--text", "x", "--keep", "100"], "keep must be between 258"),
    (["--text", "x", "--keep", "300", "--keep-token", "not one token"], "is not a single token"),
    (["/nonexistent/corpus", "--keep", "300"], "/nonexistent/corpus: No such file or directory"),
    (["--text", "x", "--keep", "300", "-o", "/nonexistent/dir/s.json"], "does not exist"),
])
def test_errors_are_one_line_with_status_2(capsys, argv, message):
    code, _out, err = run(capsys, "shrink", "-e", "o200k_base", *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and err.startswith("bytepair: error:")


def test_bad_numbers_are_usage_errors(capsys):
    assert main(["shrink", "--text", "x", "--keep", "0"]) == 2
    assert "--keep must be at least 1" in capsys.readouterr().err


def test_empty_folder(capsys, tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, "shrink", str(tmp_path / "empty"), "--keep", "300")
    assert code == 2 and "holds no files" in err
