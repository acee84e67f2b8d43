"""The number-bounds sweep of the library: every integer argument of the
public functions (``bytepair.__all__``, ``Tokenizer`` methods, the distributed
jobs) given -1, 2**70, text and a float. A bad value is a ``ValueError`` or
``TypeError`` (never an ``OverflowError``) whose message names the parameter;
a huge value that cannot bind (a thread count, a limit) works."""

from __future__ import annotations

import warnings

import pytest

import bytepair
from bytepair.distributed import count_chunks, encode_dataset

T = "hello world this is text " * 20


@pytest.fixture(scope="module")
def small():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train("hello world " * 50 + "abc def ghi " * 50, 300)


GPT2 = bytepair.get_encoding("gpt2")

CASES = {
    ("convert", "model_max_length"): lambda s, d, v: bytepair.convert(s, d / "out", to="transformers",
                                                                       model_max_length=v),
    ("extend", "vocab_size"): lambda s, d, v: bytepair.extend(s, T, v),
    ("extend", "add"): lambda s, d, v: bytepair.extend(s, T, add=v),
    ("extend", "min_frequency"): lambda s, d, v: bytepair.extend(s, T, add=2, min_frequency=v),
    ("extend", "max_token_length"): lambda s, d, v: bytepair.extend(s, T, add=2, max_token_length=v),
    ("extend", "num_threads"): lambda s, d, v: bytepair.extend(s, T, add=2, num_threads=v),
    ("shrink", "keep"): lambda s, d, v: bytepair.shrink(s, T, v),
    ("shrink", "min_count"): lambda s, d, v: bytepair.shrink(s, T, min_count=v),
    ("shrink", "num_threads"): lambda s, d, v: bytepair.shrink(s, T, 270, num_threads=v),
    ("train", "vocab_size"): lambda s, d, v: bytepair.train(T, v),
    ("train", "min_frequency"): lambda s, d, v: bytepair.train(T, 270, min_frequency=v),
    ("train", "max_token_length"): lambda s, d, v: bytepair.train(T, 270, max_token_length=v),
    ("train", "num_threads"): lambda s, d, v: bytepair.train(T, 270, num_threads=v),
    ("train", "max_words"): lambda s, d, v: bytepair.train(T, 280, superword=0.9, max_words=v),
    ("train", "superword"): lambda s, d, v: bytepair.train(T, 280, superword=v),
    ("train", "memory_limit"): lambda s, d, v: bytepair.train(T, 270, memory_limit=v),
    ("chunk_text", "max_tokens"): lambda s, d, v: GPT2.chunk_text(T, v),
    ("chunk_text", "overlap"): lambda s, d, v: GPT2.chunk_text(T, 10, overlap=v),
    ("count", "limit"): lambda s, d, v: GPT2.count(T, limit=v),
    ("count_batch", "num_threads"): lambda s, d, v: GPT2.count_batch([T], num_threads=v),
    ("decode_batch", "num_threads"): lambda s, d, v: GPT2.decode_batch([[1, 2]], num_threads=v),
    ("decode_bytes_batch", "num_threads"): lambda s, d, v: GPT2.decode_bytes_batch([[1, 2]], num_threads=v),
    ("encode", "num_threads"): lambda s, d, v: GPT2.encode(T, num_threads=v),
    ("encode_batch", "num_threads"): lambda s, d, v: GPT2.encode_batch([T], num_threads=v),
    ("encode_ordinary_batch", "num_threads"): lambda s, d, v: GPT2.encode_ordinary_batch([T], num_threads=v),
    ("encode_batch_to_numpy", "num_threads"): lambda s, d, v: GPT2.encode_batch_to_numpy([T], num_threads=v),
    ("truncate", "vocab_size"): lambda s, d, v: GPT2.truncate(v),
    ("truncate_text", "max_tokens"): lambda s, d, v: GPT2.truncate_text(T, v),
    ("count_chunks", "workers"): lambda s, d, v: count_chunks([d / "s.txt"], workers=v, progress=False),
    ("count_chunks", "max_retries"): lambda s, d, v: count_chunks([d / "s.txt"], max_retries=v, progress=False),
    ("encode_dataset", "workers"): lambda s, d, v: encode_dataset([d / "s.txt"], d / "ds", tokenizer="gpt2",
                                                                  workers=v, progress=False),
    ("encode_dataset", "max_retries"): lambda s, d, v: encode_dataset([d / "s.txt"], d / "ds", tokenizer="gpt2",
                                                                      max_retries=v, progress=False),
}


@pytest.mark.parametrize("value", [-1, 2**70, "abc", 1.5])
@pytest.mark.parametrize(("fn", "param"), list(CASES), ids=[f"{f}.{p}" for f, p in CASES])
def test_integer_argument_bounds(small, tmp_path, fn, param, value):
    (tmp_path / "s.txt").write_text(T)
    if fn == "encode_dataset":  # a finished dataset returns early: the arguments are still checked
        encode_dataset([tmp_path / "s.txt"], tmp_path / "ds", tokenizer="gpt2", progress=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            CASES[fn, param](small, tmp_path, value)
    except (ValueError, TypeError) as e:
        assert not isinstance(e, OverflowError)
        assert param in str(e) and len(str(e).splitlines()) == 1, str(e)
        return
    assert value == 2**70, f"{fn}({param}={value!r}) was accepted"
