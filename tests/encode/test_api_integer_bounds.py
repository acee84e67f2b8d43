"""Every integer argument of the public functions, given 2**70 and a negative
value: a ``ValueError`` subclass from ``bytepair.errors`` that names the
argument, or, where a huge value cannot bind (limits, budgets, thread counts),
the same result as a value that just fits. Never an ``OverflowError``."""

from __future__ import annotations

import warnings

import pytest

import bytepair
import bytepair.distributed as dist
from bytepair import _core, inspect
from bytepair.counts import count_chunks
from bytepair.errors import BytepairError
from conftest import corpus

HUGE = 2**70
TEXT = corpus("en_austen.txt")[:6000]


@pytest.fixture(scope="module")
def enc():
    return bytepair.get_encoding("gpt2")


@pytest.fixture(scope="module")
def small():
    return bytepair.train(TEXT, 280, pattern="gpt2")


def refused(fn, name):
    with pytest.raises(ValueError) as e, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn()
    assert isinstance(e.value, BytepairError), repr(e.value)
    assert name in str(e.value), str(e.value)


# (name in the message, call with V)
REFUSED = {
    "num_threads": lambda enc, small, v: enc.encode("hi", num_threads=v),
    "limit": lambda enc, small, v: enc.count("hi", limit=v),
    "max_tokens": lambda enc, small, v: enc.truncate_text("hi", v),
    "max_tokens ": lambda enc, small, v: enc.chunk_text("hi", v),
    "overlap": lambda enc, small, v: enc.chunk_text("hi there", 5, overlap=v),
    "vocab_size": lambda enc, small, v: small.truncate(v),
    "vocab_size ": lambda enc, small, v: bytepair.train(TEXT, v),
    "vocab_size  ": lambda enc, small, v: bytepair.train(None, v, objective="parity",
                                                          languages={"a": TEXT, "b": TEXT.upper()}),
    "add": lambda enc, small, v: bytepair.extend(small, TEXT.upper(), add=v),
    "vocab_size   ": lambda enc, small, v: bytepair.extend(small, TEXT.upper(), v),
    "num_merges": lambda enc, small, v: inspect.trace(TEXT, v),
    "model_max_length": lambda enc, small, v: bytepair.convert(small, "/nonexistent/hf", to="transformers",
                                                                model_max_length=v),
    "max_retries": lambda enc, small, v: dist.LocalEngine(1, max_retries=v),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_negative_values_are_refused_by_name(enc, small, name):
    refused(lambda: REFUSED[name](enc, small, -5), name.strip())


@pytest.mark.parametrize("name", ["vocab_size ", "vocab_size  ", "add", "vocab_size   ", "num_merges",
                                  "max_retries", "overlap"])
def test_huge_values_are_refused_by_name(enc, small, name):
    refused(lambda: REFUSED[name](enc, small, HUGE), name.strip())


def test_huge_limits_and_budgets_do_not_bind(enc):
    assert enc.count(TEXT, limit=HUGE) == enc.count(TEXT)
    assert enc.truncate_text(TEXT, HUGE) == TEXT
    assert enc.truncate_text(TEXT, HUGE, side="start") == TEXT
    assert enc.chunk_text(TEXT, HUGE) == [TEXT]
    assert enc.chunk_text(TEXT, HUGE, overlap=HUGE - 1) == [TEXT]
    assert inspect.pieces(enc, TEXT, limit=HUGE).total == enc.count(TEXT)


def test_huge_thread_counts_are_clamped(enc):
    assert _core.MAX_THREADS >= 4
    ids = enc.encode(TEXT)
    assert enc.encode(TEXT, num_threads=HUGE) == ids
    assert enc.encode_ordinary(TEXT, num_threads=HUGE) == ids
    assert enc.encode_batch([TEXT], num_threads=HUGE) == [ids]
    assert enc.encode_ordinary_batch([TEXT], num_threads=HUGE) == [ids]
    assert enc.count_batch([TEXT], num_threads=HUGE) == [len(ids)]
    assert enc.decode_batch([ids], num_threads=HUGE) == [TEXT]
    assert enc.encode_to_numpy(TEXT, num_threads=HUGE).tolist() == ids
    assert count_chunks(TEXT, num_threads=HUGE).as_dict() == count_chunks(TEXT, num_threads=1).as_dict()
    assert inspect.audit(enc, TEXT, num_threads=HUGE).tokens == inspect.audit(enc, TEXT).tokens
    a = bytepair.train(TEXT, 300, num_threads=HUGE)
    assert a.merges == bytepair.train(TEXT, 300, num_threads=1).merges
    assert dist.LocalEngine(HUGE).workers == _core.MAX_THREADS


def test_huge_counts_do_not_bind(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # no pair is that frequent: no merge
        assert bytepair.train(TEXT, 300, min_frequency=HUGE).n_vocab == 256
        assert bytepair.train(TEXT, 300, max_token_length=HUGE).merges == bytepair.train(TEXT, 300).merges
        assert bytepair.extend(small, TEXT.upper(), add=3, max_token_length=HUGE).n_vocab == small.n_vocab + 3
        base = bytepair.train(None, 300, objective="parity", languages={"a": TEXT, "b": TEXT.upper()})
        hybrid = bytepair.train(None, 300, objective="parity", languages={"a": TEXT, "b": TEXT.upper()},
                                parity_global_merges=HUGE)
    assert hybrid.n_vocab <= 300 and base.n_vocab <= 300


def test_merge_ids_are_checked(small):
    with pytest.raises(bytepair.VocabError, match="merge 0"):
        bytepair.Tokenizer(small.token_bytes_list, "gpt2", merges=[(HUGE, 1)])
    with pytest.raises(bytepair.VocabError, match="merge 0"):
        bytepair.Tokenizer(small.token_bytes_list, "gpt2", merges=[(-1, 1)])
