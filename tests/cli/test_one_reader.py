"""Every command that takes data reads it the same way: text, JSONL and Parquet
(any codec pyarrow reads; a null text is skipped), gzip, folders and globs,
the same file named twice counted once, and regular files only (a FIFO in a
folder is skipped, never waited on). Driven through the real executable."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from cli_run import bytepair_cli

import bytepair
from conftest import DATA, optional

DOCS = [p.strip() for p in (DATA / "en_austen.txt").read_text(encoding="utf-8").split("\n\n") if p.strip()][:300]


def _write_jsonl(path: Path, docs, gz: bool = False) -> Path:
    body = "".join(json.dumps({"id": i, "text": d}) + "\n" for i, d in enumerate(docs)).encode()
    path.write_bytes(gzip.compress(body) if gz else body)
    return path


def _write_parquet(path: Path, docs, codec: str = "zstd") -> Path:
    pa = optional("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": pa.array(docs, pa.string())}), path, compression=codec)
    return path


def _trained(r) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# ---------------------------------------------------------------- shrink reads as train reads


@pytest.fixture(scope="module")
def enc():
    return bytepair.get_encoding("gpt2")


def test_token_use_reads_jsonl_text_not_json(tmp_path, enc):
    expected = bytepair.shrinking.token_use(enc, DOCS)
    for p in (_write_jsonl(tmp_path / "a.jsonl", DOCS), _write_jsonl(tmp_path / "b.jsonl.gz", DOCS, gz=True)):
        assert (bytepair.shrinking.token_use(enc, p) == expected).all(), p.name


def test_token_use_reads_parquet_and_folders(tmp_path, enc):
    expected = bytepair.shrinking.token_use(enc, DOCS)
    (tmp_path / "d").mkdir()
    p = _write_parquet(tmp_path / "d" / "a.parquet", DOCS)
    assert (bytepair.shrinking.token_use(enc, p) == expected).all()
    assert (bytepair.shrinking.token_use(enc, tmp_path / "d") == expected).all()


def test_shrink_api_takes_a_folder(tmp_path, enc):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.txt").write_text("\n\n".join(DOCS), encoding="utf-8")
    small, _ = bytepair.shrink(enc, Path(tmp_path / "corpus"), keep=1000)
    assert small.n_vocab == 1000


def test_shrink_cli_on_jsonl_counts_the_text(tmp_path):
    _write_jsonl(tmp_path / "a.jsonl", DOCS)
    (tmp_path / "a.txt").write_text("".join(DOCS), encoding="utf-8")
    outs = {}
    for name in ("a.jsonl", "a.txt"):
        r = bytepair_cli("shrink", "-e", "gpt2", name, "--keep", "2000", "--json", "-o", f"{name}.json",
                         cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        outs[name] = json.loads(r.stdout)
    # the JSON keys and quotes are not part of the domain: the same text gives the same byte total
    assert outs["a.jsonl"]["corpus_bytes"] == outs["a.txt"]["corpus_bytes"]


# ---------------------------------------------------------------- Parquet codecs and nulls


@pytest.mark.parametrize("codec", ["zstd", "brotli", "lz4"])
def test_train_reads_every_parquet_codec(tmp_path, codec):
    _write_parquet(tmp_path / "docs.parquet", DOCS, codec)
    _write_jsonl(tmp_path / "docs.jsonl", DOCS)
    r = bytepair_cli("train", "docs.parquet", "--vocab-size", "400", "--json", "-o", "p.json", cwd=tmp_path)
    j = bytepair_cli("train", "docs.jsonl", "--vocab-size", "400", "--json", "-o", "j.json", cwd=tmp_path)
    assert "column loader" not in r.stderr
    assert _trained(r)["bytes"] == _trained(j)["bytes"]
    assert bytepair.load(tmp_path / "p.json").merges == bytepair.load(tmp_path / "j.json").merges


@pytest.mark.parametrize("codec", ["snappy", "zstd"])
def test_a_null_text_is_skipped(tmp_path, codec):
    _write_parquet(tmp_path / "nulls.parquet", DOCS[:50] + [None] + DOCS[50:], codec)
    _write_jsonl(tmp_path / "docs.jsonl", DOCS)
    r = bytepair_cli("train", "nulls.parquet", "--vocab-size", "400", "--json", "-o", "p.json", cwd=tmp_path)
    j = bytepair_cli("train", "docs.jsonl", "--vocab-size", "400", "--json", "-o", "j.json", cwd=tmp_path)
    assert _trained(r)["bytes"] == _trained(j)["bytes"]
    assert bytepair.load(tmp_path / "p.json").merges == bytepair.load(tmp_path / "j.json").merges
    c = bytepair_cli("count-chunks", "nulls.parquet", "-o", "n.bpc", "--engine", "local", "--workers", "1",
                     "--no-progress", cwd=tmp_path)
    assert c.returncode == 0, c.stderr
    e = bytepair_cli("encode-dataset", "nulls.parquet", "-o", "out", "-e", "gpt2", "--workers", "1",
                     "--no-progress", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["documents"] == len(DOCS)


# ---------------------------------------------------------------- folders, globs, overlaps, FIFOs


def _corpus_folder(tmp_path: Path) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.txt").write_text("\n\n".join(DOCS[:150]), encoding="utf-8")
    (d / "b.txt").write_text("\n\n".join(DOCS[150:]), encoding="utf-8")
    return d


def test_overlapping_paths_count_each_file_once(tmp_path):
    _corpus_folder(tmp_path)
    one = _trained(bytepair_cli("train", "corpus", "--vocab-size", "300", "--json", "-o", "1.json", cwd=tmp_path))
    both = _trained(bytepair_cli("train", "corpus/", "corpus/*.txt", "./corpus/a.txt", "--vocab-size", "300",
                                 "--json", "-o", "2.json", cwd=tmp_path))
    assert both["bytes"] == one["bytes"]
    assert bytepair.load(tmp_path / "1.json").merges == bytepair.load(tmp_path / "2.json").merges
    os.link(tmp_path / "corpus" / "a.txt", tmp_path / "hard.txt")
    linked = _trained(bytepair_cli("train", "corpus", "hard.txt", "--vocab-size", "300", "--json",
                                   "-o", "3.json", cwd=tmp_path))
    assert linked["bytes"] == one["bytes"]


def test_count_chunks_and_encode_dataset_take_folders_and_globs(tmp_path):
    _corpus_folder(tmp_path)
    r = bytepair_cli("count-chunks", "corpus", "corpus/*.txt", "-o", "c.bpc", "--workers", "1", "--no-progress",
                     cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    counts = bytepair.counts.ChunkCounts.load(tmp_path / "c.bpc")
    direct = bytepair.counts.count_chunks([tmp_path / "corpus" / "a.txt", tmp_path / "corpus" / "b.txt"],
                                          special_tokens=["<|endoftext|>"])
    assert counts == direct
    r = bytepair_cli("encode-dataset", "corpus/*.txt", "-o", "out", "-e", "gpt2", "--workers", "1",
                     "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.bin", "b.bin", "manifest.json"]


@pytest.mark.parametrize("argv", [
    ["train", "corpus", "--vocab-size", "300", "-q", "-o", "t.json"],
    ["count-chunks", "corpus", "-o", "c.bpc", "--workers", "1", "--no-progress"],
    ["encode-dataset", "corpus", "-o", "out", "-e", "gpt2", "--workers", "1", "--no-progress"],
    ["shrink", "-e", "gpt2", "corpus", "--keep", "1000", "-o", "s.json"],
    ["count", "-e", "gpt2", "corpus"],
    ["evaluate", "-e", "gpt2", "corpus"],
    ["extend", "-e", "gpt2", "corpus", "--add", "5", "-q", "-o", "x.json"],
], ids=lambda a: a[0])
def test_a_fifo_in_a_folder_is_skipped(tmp_path, argv):
    _corpus_folder(tmp_path)
    os.mkfifo(tmp_path / "corpus" / "pipe.txt")
    r = bytepair_cli(*argv, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr


def test_a_named_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    r = bytepair_cli("train", "pipe.txt", "--vocab-size", "300", "-q", "-o", "t.json", cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and "pipe.txt" in r.stderr and "not a regular file" in r.stderr, r.stderr


def test_count_and_evaluate_read_jsonl_documents(tmp_path):
    _write_jsonl(tmp_path / "a.jsonl", DOCS[:20])
    enc = bytepair.get_encoding("gpt2")
    r = bytepair_cli("count", "-e", "gpt2", "a.jsonl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == sum(len(enc.encode_ordinary(d)) for d in DOCS[:20])


def test_a_glob_matching_only_folders_says_so(tmp_path):
    (tmp_path / "splits").mkdir()
    r = bytepair_cli("train", "spl*", "--vocab-size", "300", "-q", "-o", "t.json", cwd=tmp_path)
    assert r.returncode == 2 and "folder" in r.stderr and "splits" in r.stderr, r.stderr


@pytest.mark.parametrize("argv", [
    ["diff", "gpt2", "r50k_base", "--text", "corpus", "--json"],
    ["sweep", "--text", "the cat sat on the mat", "--eval", "corpus", "--merges", "0,4", "--json"],
], ids=lambda a: a[0])
def test_text_file_options_read_folders(tmp_path, argv):
    _corpus_folder(tmp_path)
    os.mkfifo(tmp_path / "corpus" / "pipe.txt")
    r = bytepair_cli(*argv, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
