"""Many small files are counted in batches: the counts and their first-seen
order are those of counting each file on its own, in the same order, and a
bad file among them is named (speed: benches/bench_many_files.py)."""

from __future__ import annotations

import pytest

from bytepair import _core, patterns
from bytepair.counts import ChunkCounts, count_chunks
from bytepair.errors import ReadError


def test_batched_small_files_count_as_one_by_one(tmp_path, corpora):
    text = corpora["en_austen.txt"][:60_000] + corpora["ko_prose.txt"][:20_000]
    folder = tmp_path / "docs"
    folder.mkdir()
    paths = []
    for i in range(0, len(text), 700):
        p = folder / f"{i:06d}.txt"
        p.write_text(text[i:i + 700], encoding="utf-8")
        paths.append(p)
    pat = patterns.resolve("gpt2")
    one = _core.ChunkCounter(pat, ["<|endoftext|>"], None, 2)
    for p in sorted(paths):
        one.feed_file(str(p))
    want = ChunkCounts.from_table(one.finish(), pat, ["<|endoftext|>"])
    got = count_chunks([folder], pattern="gpt2", special_tokens=["<|endoftext|>"], num_threads=2)
    assert list(got.items()) == list(want.items())
    # mixed with str documents and a large file, in order
    big = tmp_path / "big.txt"
    big.write_text(text * 20, encoding="utf-8")
    mixed = count_chunks(["head text", folder, big, "tail"], pattern="gpt2")
    ref = count_chunks(["head text"] + [p.read_text(encoding="utf-8") for p in sorted(paths)] + [text * 20, "tail"],
                       pattern="gpt2")
    assert list(mixed.items()) == list(ref.items())


def test_a_bad_small_file_is_named(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(50):
        (folder / f"{i:02d}.txt").write_text(f"document {i}", encoding="utf-8")
    (folder / "30.txt").write_bytes(b"ok \xff no")
    with pytest.raises(ReadError, match="30.txt") as e:
        count_chunks([folder], pattern="gpt2")
    assert "offset 3" in str(e.value) or getattr(e.value, "offset", None) == 3
