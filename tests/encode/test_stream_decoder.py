"""The streaming decoder never emits part of a character (seed B and C examples)."""

from __future__ import annotations

import pytest

import bytepair
from bytepair.errors import UnknownTokenError


def test_korean_one_by_one():
    d = bytepair.get_encoding("gpt2").stream_decoder()
    ids = [47991, 250, 166, 113, 255, 168, 244, 112]
    assert [d.feed(i) for i in ids] == ["", "한", "", "", "국", "", "", "어"]
    assert d.flush() == ""


def test_token_example():
    enc = bytepair.get_encoding("gpt2")
    ids = [169, 228, 254, 169, 223, 108]
    assert enc.encode("토큰") == ids
    d = enc.stream_decoder()
    assert [d.feed(i) for i in ids] == ["", "", "토", "", "", "큰"]
    # decoding each token alone cannot do this
    assert [enc.decode([i]) for i in ids] == ["\ufffd"] * 6


def test_feed_lists_and_flush_incomplete():
    enc = bytepair.get_encoding("gpt2")
    d = enc.stream_decoder()
    assert d.feed([47991]) == ""
    assert d.pending == b"\xed\x95"
    assert d.flush() == "\ufffd"  # an incomplete character at the end is replaced
    assert d.feed([47991, 250, 166]) == "한"
    assert d.feed(iter([113, 255])) == "국"
    with pytest.raises(UnknownTokenError):
        d.feed(10**9)
    assert d.feed(15496) == "Hello"


def test_strict_errors_raise_on_invalid_bytes():
    enc = bytepair.get_encoding("gpt2")
    d = enc.stream_decoder(errors="strict")
    bad = enc.encode_single_token(b"\xff")
    with pytest.raises(UnicodeDecodeError):
        d.feed(bad)


def test_matches_whole_decode_on_corpus(corpora):
    enc = bytepair.get_encoding("o200k_base")
    text = corpora["multi_unicode.txt"][:3000]
    d = enc.stream_decoder()
    out = [d.feed(i) for i in enc.encode_ordinary(text)]
    assert "".join(out) + d.flush() == text
    assert all("\ufffd" not in piece for piece in out)
