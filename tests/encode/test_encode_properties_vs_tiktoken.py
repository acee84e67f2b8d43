"""Property tests: bytepair equals tiktoken on arbitrary text (lone surrogates,
control characters, every Unicode category, special-token look-alikes) and
round-trips every str without lone surrogates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from conftest import ENCODINGS, tiktoken_encoding

LOOKALIKES = ["<|endoftext|>", "<|endoftext", "|>", "<|", "<|fim_prefix|>", "<|endofprompt|>",
              "<|ENDOFTEXT|>", "<||>", "'s", "'LL", "\r\n", " \n", "123456"]

texts = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=60),
    st.lists(st.one_of(st.sampled_from(LOOKALIKES), st.text(max_size=5),
                       st.sampled_from(["x", " ", "가", "😀", "\ud800", "\udc00", "A", "a", "1"])),
             max_size=30).map("".join),
)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=150)
@given(text=texts)
def test_equals_tiktoken(name, text):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    want = ref.encode(text, disallowed_special=())
    assert ours.encode(text, disallowed_special=()) == want
    assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
    assert ours.count(text, disallowed_special=()) == len(want)
    assert ours.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    try:
        expected = ref.encode(text)
    except ValueError:
        with pytest.raises(ValueError):
            ours.encode(text)
    else:
        assert ours.encode(text) == expected


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=100)
@given(text=st.text(alphabet=st.characters(exclude_categories=("Cs",))))
def test_roundtrip(name, text):
    enc = bytepair.get_encoding(name)
    ids = enc.encode_ordinary(text)
    assert enc.decode(ids) == text
    d = enc.stream_decoder()
    assert "".join(d.feed(i) for i in ids) + d.flush() == text


@settings(max_examples=60)
@given(texts=st.lists(texts, max_size=8), threads=st.sampled_from([None, 1, 2, 4]))
def test_batch_equals_sequential(texts, threads):
    enc = bytepair.get_encoding("o200k_base")
    assert enc.encode_batch(texts, num_threads=threads, disallowed_special=()) == [
        enc.encode(t, disallowed_special=()) for t in texts]


@settings(max_examples=100)
@given(data=st.binary(max_size=300))
def test_merge_paths_on_arbitrary_bytes(data):
    from bytepair import reference

    enc = bytepair.get_encoding("gpt2")
    want = reference.encode_piece(data, enc.mergeable_ranks) if data else []
    for path in ("auto", "scan", "heap", "queue", "split"):
        assert enc._core.encode_piece_with(data, path) == want
