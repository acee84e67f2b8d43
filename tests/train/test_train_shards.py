"""Training straight from shards: text files counted in parallel ranges,
Parquet, JSONL (plain and gzip), directories and globs, mixed; a bad shard is
an error naming it."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair import reference
from bytepair.counts import ChunkCounts, count_chunks
from bytepair.errors import ReadError


def _docs(corpora, n: int, seed: int) -> list:
    rng = random.Random(seed)
    print("seed", seed)
    text = corpora["en_austen.txt"] + corpora["ko_prose.txt"] + corpora["code_python.txt"]
    out = []
    for _ in range(n):
        a = rng.randrange(len(text) - 400)
        out.append(text[a:a + rng.randrange(20, 400)])
    return out


def _write_shards(tmp_path: Path, docs: list) -> list:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    q = len(docs) // 4
    (tmp_path / "t.txt").write_text(docs[0], encoding="utf-8")
    pq.write_table(pa.table({"id": list(range(q - 1)), "body": docs[1:q]}), tmp_path / "p.parquet")
    with open(tmp_path / "j.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"content": d, "n": 1}) + "\n" for d in docs[q:2 * q])
    with gzip.open(tmp_path / "z.jsonl.gz", "wt", encoding="utf-8") as f:
        for d in docs[2 * q:3 * q]:
            f.write(json.dumps({"content": d}) + "\n")
    sub = tmp_path / "dir"
    sub.mkdir()
    for i, d in enumerate(docs[3 * q:]):
        (sub / f"{i:04d}.txt").write_text(d, encoding="utf-8")
    return [tmp_path / "t.txt", tmp_path / "p.parquet", tmp_path / "j.jsonl", tmp_path / "z.jsonl.gz", sub]


def test_mixed_shards_train_like_their_documents(tmp_path, corpora):
    docs = _docs(corpora, 80, seed=1234)
    shards = _write_shards(tmp_path, docs)
    for pattern in ["gpt2", "o200k"]:
        want = ChunkCounts.from_texts(docs, pattern=pattern)
        got = count_chunks(shards, pattern=pattern, text_column="body", text_field="content")
        assert list(got.items()) == list(want.items())
        tok = bytepair.train(shards, 400, pattern=pattern, text_column="body", text_field="content")
        ref_merges, _, _ = reference.train(docs, 400, pattern=bytepair.patterns.resolve(pattern))
        assert [tuple(m) for m in tok.merges] == [tuple(m) for m in ref_merges]


def test_glob_and_directory_expand_in_sorted_order(tmp_path):
    for name, text in [("b.txt", "beta beta"), ("a.txt", "alpha"), ("c.md", "gamma")]:
        (tmp_path / name).write_text(text)
    got = count_chunks([tmp_path / "*.txt"], pattern="gpt2")
    assert list(got.items()) == list(ChunkCounts.from_texts(["alpha", "beta beta"], pattern="gpt2").items())
    got = count_chunks([tmp_path], pattern="gpt2")
    assert got == ChunkCounts.from_texts(["alpha", "beta beta", "gamma"], pattern="gpt2")
    with pytest.raises(ReadError, match="no file matches"):
        count_chunks([tmp_path / "*.nothing"], pattern="gpt2")


def test_large_text_file_counts_in_ranges_like_one_thread(tmp_path, corpora):
    # more than one 8 MiB range: the range edges must not change a count or the order
    text = "".join(corpora.values())
    reps = (9 << 20) // len(text.encode()) + 1
    big = "\n".join(f"{i} {text}" for i in range(reps))
    path = tmp_path / "big.txt"
    path.write_text(big, encoding="utf-8")
    for pattern in ["gpt2", "cl100k", "o200k"]:
        one = count_chunks([path], pattern=pattern, num_threads=1)
        two = count_chunks([path], pattern=pattern, num_threads=2)
        assert list(one.items()) == list(two.items())
        assert one == ChunkCounts.from_texts([big], pattern=pattern, num_threads=1)


def test_bad_shards_are_named(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    good = tmp_path / "good.txt"
    good.write_text("fine text")
    pq.write_table(pa.table({"other": ["x"]}), tmp_path / "nocol.parquet")
    (tmp_path / "bad.jsonl").write_text('{"text": "ok"}\n{"text": 3}\n')
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 au lait")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    for name in ["nocol.parquet", "bad.jsonl", "latin1.txt", "junk.parquet"]:
        with pytest.raises(ReadError, match=name.replace(".", r"\.")) as ei:
            bytepair.train([good, tmp_path / name], 300, pattern="gpt2")
        assert isinstance(ei.value, ValueError)


def test_cli_trains_on_shards_and_reports_peak_memory(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"body": ["one two three", "two three four"]}), tmp_path / "p.parquet")
    (tmp_path / "j.jsonl").write_text(json.dumps({"content": "three four five"}) + "\n")
    out = tmp_path / "tok.json"
    cmd = [sys.executable, "-m", "bytepair", "train", str(tmp_path / "p.parquet"), str(tmp_path / "j.jsonl"),
           "--text-column", "body", "--text-field", "content", "--vocab-size", "270", "--json", "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["peak_memory_bytes"] > 1 << 20 and summary["bytes"] == len("one two three" "two three four"
                                                                             "three four five")
    r = subprocess.run(cmd[:4] + [str(tmp_path / "p.parquet"), "-o", str(out)], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 2 and "p.parquet" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cache_resumes_after_a_failure_with_the_same_counts(tmp_path, corpora):
    docs = _docs(corpora, 6, seed=99)
    paths = []
    for i, d in enumerate(docs):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(d, encoding="utf-8")
    paths[4].write_bytes(b"\xff not utf-8")  # the run stops here, as a Ctrl-C would
    cache = tmp_path / "cache"
    with pytest.raises(ReadError, match="4.txt"):
        count_chunks(paths + ["tail text"], pattern="gpt2", cache_dir=cache)
    assert len(list(cache.iterdir())) == 4  # the files counted before the stop are kept
    paths[4].write_text(docs[4], encoding="utf-8")
    got = count_chunks(paths + ["tail text"], pattern="gpt2", cache_dir=cache)
    assert len(list(cache.iterdir())) == 6
    want = ChunkCounts.from_texts(docs + ["tail text"], pattern="gpt2")
    assert list(got.items()) == list(want.items())
    # a different pattern does not reuse them
    count_chunks(paths, pattern="o200k", cache_dir=cache)
    assert len(list(cache.iterdir())) == 12
