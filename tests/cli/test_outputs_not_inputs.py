"""No command writes over a file it reads, or writes two outputs to one file:
the same file is found by inode (a hard link, ``./`` spellings), not by name.
Each case drives the real ``bytepair`` executable and checks the input is intact."""

from __future__ import annotations

import os
import shutil

import pytest
from cli_run import bytepair_cli

from conftest import DATA

TEXT = (DATA / "en_kjv.txt").read_bytes()[:20_000]


@pytest.fixture
def corpus(tmp_path):
    p = tmp_path / "my.txt"
    p.write_bytes(TEXT)
    return p


def _refused(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    line = r.stderr.strip()
    assert "Traceback" not in r.stderr and len(line.splitlines()) == 1, r.stderr
    for w in words:
        assert w in line, line
    return line


def test_train_output_is_the_corpus(tmp_path, corpus):
    r = bytepair_cli("train", "my.txt", "--vocab-size", "300", "-q", "-o", "my.txt", cwd=tmp_path)
    _refused(r, "-o", "my.txt")
    assert corpus.read_bytes() == TEXT


def test_train_output_is_a_hard_link_of_the_corpus(tmp_path, corpus):
    os.link(corpus, tmp_path / "alias.json")
    r = bytepair_cli("train", "./my.txt", "--vocab-size", "300", "-q", "-o", "alias.json", cwd=tmp_path)
    _refused(r, "alias.json")
    assert corpus.read_bytes() == TEXT


def test_train_output_is_a_file_of_a_training_folder(tmp_path, corpus):
    r = bytepair_cli("train", ".", "--vocab-size", "300", "-q", "-o", "my.txt", cwd=tmp_path)
    _refused(r, "my.txt")
    assert corpus.read_bytes() == TEXT


def test_train_output_is_the_counts_file(tmp_path, corpus):
    assert bytepair_cli("count-chunks", "my.txt", "-o", "c.bpc", cwd=tmp_path).returncode == 0
    before = (tmp_path / "c.bpc").read_bytes()
    r = bytepair_cli("train", "--counts", "c.bpc", "--vocab-size", "300", "-q", "-o", "c.bpc", cwd=tmp_path)
    _refused(r, "c.bpc")
    assert (tmp_path / "c.bpc").read_bytes() == before


def test_count_chunks_output_is_a_shard(tmp_path, corpus):
    r = bytepair_cli("count-chunks", "my.txt", "-o", "my.txt", cwd=tmp_path)
    _refused(r, "my.txt")
    assert corpus.read_bytes() == TEXT


@pytest.fixture
def tokenizer(tmp_path, corpus):
    r = bytepair_cli("train", "my.txt", "--vocab-size", "400", "-q", "-o", "tok.json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / "tok.json"


def test_shrink_two_outputs_one_file(tmp_path, corpus, tokenizer):
    r = bytepair_cli("shrink", "-t", "tok.json", "my.txt", "--keep", "300", "-o", "same.npy",
                     "--id-map", "./same.npy", cwd=tmp_path)
    _refused(r, "--id-map", "-o")
    assert not (tmp_path / "same.npy").exists()


def test_shrink_output_is_the_corpus_or_the_base(tmp_path, corpus, tokenizer):
    base = tokenizer.read_bytes()
    r = bytepair_cli("shrink", "-t", "tok.json", "my.txt", "--keep", "300", "-o", "my.txt", cwd=tmp_path)
    _refused(r, "my.txt")
    r = bytepair_cli("shrink", "-t", "tok.json", "my.txt", "--keep", "300", "-o", "x.json",
                     "--id-map", "tok.json", cwd=tmp_path)
    _refused(r, "tok.json")
    assert corpus.read_bytes() == TEXT and tokenizer.read_bytes() == base


def test_extend_output_is_the_base(tmp_path, corpus, tokenizer):
    base = tokenizer.read_bytes()
    r = bytepair_cli("extend", "-t", "tok.json", "my.txt", "--add", "10", "-q", "-o", "tok.json", cwd=tmp_path)
    _refused(r, "tok.json")
    assert tokenizer.read_bytes() == base


def test_convert_output_is_the_input(tmp_path, tokenizer):
    base = tokenizer.read_bytes()
    r = bytepair_cli("convert", "tok.json", "./tok.json", "--to", "bytepair", cwd=tmp_path)
    _refused(r, "tok.json")
    assert tokenizer.read_bytes() == base


def test_encode_dataset_output_is_a_shard(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "a.bin").write_bytes(TEXT)  # a text shard whose token file would be data/a.bin
    r = bytepair_cli("encode-dataset", "data/a.bin", "-o", "data", "-e", "gpt2", "--no-progress", cwd=tmp_path)
    _refused(r, "a.bin")
    assert (d / "a.bin").read_bytes() == TEXT


def test_chunk_output_is_the_input(tmp_path, corpus):
    r = bytepair_cli("chunk", "my.txt", "-e", "gpt2", "--max-tokens", "100", "-o", "my.txt", cwd=tmp_path)
    _refused(r, "my.txt")
    assert corpus.read_bytes() == TEXT


def test_distinct_outputs_still_work(tmp_path, corpus, tokenizer):
    pytest.importorskip("numpy")
    r = bytepair_cli("shrink", "-t", "tok.json", "my.txt", "--keep", "300", "-o", "small.json",
                     "--id-map", "map.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "small.json").exists() and (tmp_path / "map.npy").exists()
    shutil.copy(corpus, tmp_path / "copy.txt")  # the same bytes in another file is not the same file
    r = bytepair_cli("train", "my.txt", "--vocab-size", "300", "-q", "-o", "copy.txt", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
