"""First checks of the public surface against known ids and tiktoken."""

import pytest

import bytepair
from conftest import ENCODINGS, tiktoken_encoding


def test_known_ids():
    assert bytepair.get_encoding("gpt2").encode("hello world") == [31373, 995]
    assert bytepair.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert bytepair.get_encoding("o200k_base").encode(" hello") == [40617]


@pytest.mark.parametrize("name", ENCODINGS)
def test_matches_tiktoken_on_corpora(name, corpora):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for text in corpora.values():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)


def test_train_and_roundtrip(tmp_path):
    tok = bytepair.train("low lower lowest " * 50, vocab_size=260, pattern="gpt2")
    assert tok.decode(tok.encode(" lowest")) == " lowest"
    tok.save(tmp_path / "t.json")
    back = bytepair.load(tmp_path / "t.json")
    assert back == tok and back.merges == tok.merges


def test_counts_roundtrip_and_train(tmp_path):
    from bytepair.counts import ChunkCounts

    texts = ["low lower lowest ", "newer newest wider widest " * 3]
    c = ChunkCounts.from_texts(texts, pattern="gpt2")
    c.save(tmp_path / "c.bpc")
    back = ChunkCounts.load(tmp_path / "c.bpc")
    assert back == c
    assert bytepair.train(counts=back, vocab_size=270).merges == bytepair.train(texts, 270, pattern="gpt2").merges
