"""One long text on several threads (``num_threads``): exactly the ids of a
single-thread encode, on real corpora, hostile inputs and special tokens."""

from __future__ import annotations

import random

import numpy as np
import pytest

import bytepair
from conftest import CORPORA, ENCODINGS, corpus, tiktoken_encoding


def long_text(min_bytes: int = 700_000) -> str:
    """The test corpora joined and repeated past the parallel threshold."""
    text = "\n\n".join(corpus(c) for c in CORPORA)
    return text * (min_bytes // len(text.encode()) + 1)


@pytest.mark.parametrize("name", ENCODINGS)
def test_threads_give_single_thread_ids_on_real_text(name):
    enc = bytepair.get_encoding(name)
    text = long_text()
    one = enc.encode_to_numpy(text, num_threads=1)
    assert one.tolist() == tiktoken_encoding(name).encode_ordinary(text)
    for k in (2, 3, None):
        assert np.array_equal(enc.encode_to_numpy(text, num_threads=k), one), k
    assert enc.encode(text, num_threads=2) == one.tolist()
    assert enc.encode_ordinary(text, num_threads=2) == one.tolist()


HOSTILE = {
    "spaces": " " * 600_000 + "x",
    "one word": "x" * 600_000,
    "base64": "".join(random.Random(1).choice("ABCDEFabcdef0123+/") for _ in range(600_000)),
    "words and digits": " ".join(f"w{i}" for i in range(120_000)),
    "newlines": "a\n" * 300_000 + "\n" * 1000 + "b \n" * 100_000,
    "korean": "".join(chr(0xAC00 + random.Random(2).randrange(11172)) for _ in range(250_000)),
    "mixed marks": "é\u0301 a\u0300b " * 60_000,
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize("name", ENCODINGS)
def test_threads_give_single_thread_ids_on_hostile_text(name, kind):
    enc = bytepair.get_encoding(name)
    text = HOSTILE[kind]
    one = enc.encode_to_numpy(text, num_threads=1)
    assert np.array_equal(enc.encode_to_numpy(text, num_threads=2), one)
    assert np.array_equal(enc.encode_to_numpy(text, num_threads=5), one)


def test_threads_and_special_tokens():
    enc = bytepair.get_encoding("cl100k_base")
    text = long_text(400_000).replace("\n\n", "<|endoftext|>", 500)
    one = enc.encode(text, allowed_special="all", num_threads=1)
    assert enc.encode(text, allowed_special="all", num_threads=2) == one
    assert np.array_equal(enc.encode_to_numpy(text, allowed_special="all", num_threads=3), np.asarray(one))
    with pytest.raises(ValueError, match="endoftext"):
        enc.encode_to_numpy(text, num_threads=2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_bad_thread_counts(bad):
    enc = bytepair.get_encoding("gpt2")
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_to_numpy("hello", num_threads=bad)
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode("hello", num_threads=bad)
