"""The core encoder against tiktoken, id for id: real corpora whole and as
documents, tricky strings, lone surrogates, and the count / batch / numpy /
decode surface. (The published ids of the worked examples are asserted in
tests/reference/test_worked_examples.py.)"""

from __future__ import annotations

import pytest

import bytepair
from bytepair.errors import DisallowedSpecialError
from conftest import CORPORA, ENCODINGS, optional, tiktoken_encoding


def documents(text: str) -> list:
    return [d for d in text.split("\n\n") if d]


@pytest.mark.parametrize("name", ENCODINGS)
def test_corpora_whole_and_as_documents(name, corpora):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for cname in CORPORA:
        text = corpora[cname]
        want = ref.encode_ordinary(text)
        assert ours.encode_ordinary(text) == want, cname
        assert ours.encode(text) == ref.encode(text), cname
        assert ours.count(text) == len(want), cname
        assert ours.encode_to_numpy(text).tolist() == want, cname
        docs = documents(text)
        want_docs = ref.encode_ordinary_batch(docs)
        assert ours.encode_batch(docs) == want_docs, cname
        assert ours.encode_batch(docs, num_threads=1) == want_docs, cname
        assert ours.encode_batch(docs, num_threads=3) == want_docs, cname
        assert ours.count_batch(docs) == [len(d) for d in want_docs], cname
        assert ours.decode(want) == text


TRICKY = [
    "", " ", "  ", "\n", " \n\n ", "a" * 300, " " * 1000 + "x", "x" * 5000, "\t\t\r\n",
    "I'm lowest 토큰", "don't 'LL 'Ve", "😀" * 50, "한국어" * 100, "1234567890" * 20,
    "HelloWorld CamelCaseWORDS xmlHTTPRequest", "a\u0301e\u0301", "\x00\x01\x7f",
    "<|endoftext|>", "<|endoftext", "<|endoftext|><|endoftext|>", "  <|fim_prefix|>x",
    "٣٤٥ १२३ ⅷ", "ǅungla Ǆ", "x\u200dy", "a" + "\ufeff" * 3,
]


@pytest.mark.parametrize("name", ENCODINGS)
def test_tricky_strings(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for s in TRICKY:
        assert ours.encode_ordinary(s) == ref.encode_ordinary(s), repr(s)
        assert ours.encode(s, allowed_special="all") == ref.encode(s, allowed_special="all"), repr(s)


@pytest.mark.parametrize("name", ENCODINGS)
def test_surrogates_like_tiktoken(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for s in ["a\ud800b", "\udfff", "x\ud83d\ude00y", "\ud83d", "ok \udc80\udc81 <|endoftext|>"]:
        assert ours.encode(s, disallowed_special=()) == ref.encode(s, disallowed_special=()), repr(s)
        assert ours.encode_ordinary(s) == ref.encode_ordinary(s), repr(s)
        assert ours.count(s, disallowed_special=()) == len(ref.encode_ordinary(s))
        assert ours.encode_batch([s, "z"], disallowed_special=()) == [ref.encode_ordinary(s), [ref.encode_ordinary("z")[0]]]
        assert ours.encode_to_numpy(s, disallowed_special=()).tolist() == ref.encode_ordinary(s)


def test_decode_surface_matches_tiktoken(corpora):
    ours, ref = bytepair.get_encoding("o200k_base"), tiktoken_encoding("o200k_base")
    ids = ref.encode_ordinary(corpora["multi_unicode.txt"][:5000])
    assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
    assert ours.decode(ids) == ref.decode(ids)
    assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
    assert [ours.decode_single_token_bytes(i) for i in ids[:50]] == [ref.decode_single_token_bytes(i) for i in ids[:50]]
    assert ours.decode(ids[:7], errors="ignore") == ref.decode(ids[:7], errors="ignore")
    assert ours.decode_single_token_bytes(199999) == b"<|endoftext|>"
    assert ours.decode_batch([ids[:10], ids[10:20]]) == [ref.decode(ids[:10]), ref.decode(ids[10:20])]
    # tuples and numpy arrays are sequences of ints too
    np = optional("numpy")
    assert ours.decode(tuple(ids[:30])) == ours.decode(np.array(ids[:30], dtype=np.uint32))


def test_numpy_is_uint32_and_equal():
    np = optional("numpy")
    enc = bytepair.get_encoding("cl100k_base")
    arr = enc.encode_to_numpy("hello world " * 100)
    assert arr.dtype == np.uint32 and arr.tolist() == enc.encode("hello world " * 100)
    assert enc.encode_to_numpy("").tolist() == []


def test_numpy_owns_the_core_buffer_and_keeps_it_alive():
    """encode_to_numpy / encode_batch_to_numpy hand the core's vectors to numpy
    without a copy: arrays whose base owns the Rust vector and keeps it alive
    as long as an array uses it (even after the tokenizer and every other
    reference are gone). The array is the vector's only user, so it is writable."""
    import gc

    np = optional("numpy")
    enc = bytepair.get_encoding("cl100k_base")
    text = "zero copy, kept alive. " * 5000
    want = enc.encode(text)
    arr = enc.encode_to_numpy(text)
    assert type(arr) is np.ndarray and arr.dtype == np.uint32 and arr.base is not None and not arr.flags.owndata
    assert arr.flags.writeable and arr.flags.c_contiguous
    again = enc.encode_to_numpy(text)
    arr[0] += 1  # its own buffer: another call's array does not change
    assert again.tolist() == want and arr[0] == want[0] + 1
    arr[0] -= 1
    ids, offsets = enc.encode_batch_to_numpy([text, "", "x"])
    assert ids.base is not None and not ids.flags.owndata and ids.dtype == np.uint32 and offsets.dtype == np.int64
    head = arr[:100]  # a view of the view: keeps the same buffer alive
    del enc, arr
    gc.collect()
    _ = [bytearray(1 << 16) for _ in range(64)]  # reuse freed memory, if any was freed
    assert head.tolist() == want[:100]
    assert ids[: len(want)].tolist() == want and offsets.tolist() == [0, len(want), len(want), len(want) + 1]


@pytest.mark.parametrize("name", ENCODINGS)
def test_batch_to_numpy_is_encode_batch_flattened(name, corpora):
    np = optional("numpy")
    enc = bytepair.get_encoding(name)
    docs = documents(corpora["en_austen.txt"])[:40] + ["", "\ud800 lone", "안녕하세요 " * 50] + documents(
        corpora["ko_prose.txt"]
    )[:40]
    want = enc.encode_batch(docs)
    for threads in (1, 2, None):
        ids, offsets = enc.encode_batch_to_numpy(docs, num_threads=threads)
        assert ids.dtype == np.uint32 and offsets.dtype == np.int64
        assert offsets.tolist()[0] == 0 and len(offsets) == len(docs) + 1
        assert [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(docs))] == want
    ids, offsets = enc.encode_batch_to_numpy([])
    assert ids.tolist() == [] and offsets.tolist() == [0]
    # the special-token policy is encode_batch's
    eot = next(iter(enc.special_tokens_set))
    with pytest.raises(DisallowedSpecialError):
        enc.encode_batch_to_numpy(["a", eot])
    ids, offsets = enc.encode_batch_to_numpy(["a", eot], allowed_special="all")
    assert ids.tolist() == [x for d in enc.encode_batch(["a", eot], allowed_special="all") for x in d]
