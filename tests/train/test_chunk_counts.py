"""ChunkCounts: first-seen order, shard merging, the .bpc file format, bad files."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.counts import ChunkCounts
from bytepair.errors import FormatError, TrainingError


def test_from_texts_matches_reference(corpora):
    for pattern in ["gpt2", "cl100k", "o200k", None]:
        texts = [corpora["en_austen.txt"][:3000], corpora["ko_prose.txt"][:3000]]
        c = ChunkCounts.from_texts(texts, pattern=pattern, special_tokens=["<|endoftext|>"])
        want = reference.count_chunks(texts, bytepair.patterns.resolve(pattern), ["<|endoftext|>"])
        assert list(c.items()) == list(want.items())
        assert c.as_dict() == want and len(c) == len(want) and c.total() == sum(want.values())


@settings(max_examples=80, deadline=None)
@given(shards=st.lists(st.text(alphabet="ab c\n'", max_size=30), min_size=1, max_size=5))
def test_merging_shards_in_order_equals_counting_the_concatenation(shards):
    whole = ChunkCounts.from_texts(shards, pattern="gpt2")
    merged = ChunkCounts(pattern="gpt2")
    for s in shards:
        merged.update(ChunkCounts.from_texts([s], pattern="gpt2"))
    assert merged == whole
    assert list(merged.items()) == list(reference.count_chunks(shards, bytepair.patterns.GPT2).items())


def test_update_keeps_first_seen_order_and_adds():
    a = ChunkCounts({b"x": 1, b"y": 2}, pattern=None)
    b = ChunkCounts({b"z": 5, b"x": 3}, pattern=None)
    assert a.update(b) is a
    assert list(a.items()) == [(b"x", 4), (b"y", 2), (b"z", 5)]
    assert a[b"z"] == 5 and a[b"nope"] == 0
    with pytest.raises(ValueError, match="different patterns"):
        a.update(ChunkCounts(pattern="gpt2"))
    a.update(a)
    assert a.as_dict() == {b"x": 8, b"y": 4, b"z": 10}


def test_equality_is_ordered():
    assert ChunkCounts({b"a": 1, b"b": 1}, pattern=None) != ChunkCounts({b"b": 1, b"a": 1}, pattern=None)
    assert ChunkCounts({b"a": 1}, pattern=None) != ChunkCounts({b"a": 1}, pattern="gpt2")


def _python_bpc(counts: dict, pattern, specials) -> bytes:
    """The .bpc layout written independently (JSON header line, LEB128 lengths/counts)."""
    def varint(n):
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    header = {"format": "bytepair-chunk-counts", "version": 1, "pattern": pattern,
              "special_tokens": specials, "entries": len(counts)}
    body = b"".join(varint(len(k)) + k + varint(n) for k, n in counts.items())
    return json.dumps(header, ensure_ascii=False).encode() + b"\n" + body


def test_save_load_roundtrip_and_format(tmp_path):
    counts = {b"hello": 3, b" w\xc3\xb6rld": 300, b"\x00": 2**40, b"": 1}
    c = ChunkCounts(counts, pattern="gpt2", special_tokens=["<|e|>"])
    c.save(tmp_path / "c.bpc")
    raw = (tmp_path / "c.bpc").read_bytes()
    assert raw == _python_bpc(counts, bytepair.patterns.GPT2, ["<|e|>"])
    back = ChunkCounts.load(tmp_path / "c.bpc")
    assert back == c and back.special_tokens == ["<|e|>"]
    assert pickle.loads(pickle.dumps(c)) == c


def test_damaged_files_raise_format_error(tmp_path):
    good = _python_bpc({b"ab": 2, b"cd": 1}, None, [])
    cases = {
        "not_bpc": b"hello\n",
        "truncated": good[:-2],
        "trailing": good + b"\x00",
        "version": good.replace(b'"version": 1', b'"version": 9'),
        "entries": good.replace(b'"entries": 2', b'"entries": 3'),
        "no_newline": b'{"format": "bytepair-chunk-counts"}',
    }
    for name, raw in cases.items():
        p = tmp_path / f"{name}.bpc"
        p.write_bytes(raw)
        with pytest.raises(FormatError) as e:
            ChunkCounts.load(p)
        assert str(p) in str(e.value), name


def test_bad_counts():
    with pytest.raises(TrainingError):
        ChunkCounts({b"a": -1}, pattern=None)
    with pytest.raises(TypeError):
        ChunkCounts({"a": 1}, pattern=None)


def test_from_files(tmp_path, corpora):
    paths = []
    for i, name in enumerate(["en_kjv.txt", "code_python.txt"]):
        p = tmp_path / f"{i}.txt"
        p.write_text(corpora[name][:4000], encoding="utf-8")
        paths.append(p)
    c = ChunkCounts.from_files(paths, pattern="o200k")
    assert c == ChunkCounts.from_texts([p.read_text(encoding="utf-8") for p in paths], pattern="o200k")
    assert ChunkCounts.from_files([str(p) for p in paths], pattern="o200k") == c


def test_the_former_name_count_is_count_chunks():
    from bytepair import counts

    assert counts.count is counts.count_chunks
    assert counts.count("ab ab", pattern="gpt2").as_dict() == {b"ab": 1, b" ab": 1}
