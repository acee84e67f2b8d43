"""The encoding API's edges: bad argument types and unknown ids name the
problem, pickling (bundled encodings by name, trained ones by tokens), and
encode_batch in a forked child."""

from __future__ import annotations

import pickle

import pytest

import bytepair
from bytepair.errors import UnknownTokenError
from conftest import ENCODINGS


def test_non_str_input_is_a_type_error():
    enc = bytepair.get_encoding("gpt2")
    for bad in [b"bytes", 3, None, ["a"]]:
        with pytest.raises(TypeError):
            enc.encode(bad)
        with pytest.raises(TypeError):
            enc.count(bad)
    with pytest.raises(TypeError):
        enc.encode_batch("a single string")
    with pytest.raises(TypeError):
        enc.encode_batch(["ok", b"bytes"])
    with pytest.raises(ValueError):
        enc.encode_batch(["ok"], num_threads=0)


@pytest.mark.parametrize("bad", [-1, 50_257, 2**31, 2**32, 2**40, 2**80, -(2**70)])
def test_unknown_ids_name_the_id(bad):
    enc = bytepair.get_encoding("gpt2")
    for call in (lambda: enc.decode([15496, bad]), lambda: enc.decode_bytes([bad]),
                 lambda: enc.decode_single_token_bytes(bad), lambda: enc.decode_tokens_bytes([bad]),
                 lambda: enc.decode_batch([[1], [bad]])):
        with pytest.raises(UnknownTokenError) as e:
            call()
        assert isinstance(e.value, KeyError)
        assert str(bad) in str(e.value)


def test_non_int_ids_are_type_errors():
    enc = bytepair.get_encoding("gpt2")
    for bad in (["1"], [1.5], "abc", [None]):
        with pytest.raises(TypeError):
            enc.decode(bad)


@pytest.mark.parametrize("name", ENCODINGS)
def test_pickle_bundled_by_name(name):
    enc = bytepair.get_encoding(name)
    data = pickle.dumps(enc)
    assert len(data) < 200
    back = pickle.loads(data)
    assert back is enc


def test_pickle_trained_by_tokens():
    tok = bytepair.train("low lower lowest newer newest " * 20, 270, pattern="gpt2", special_tokens=["<|e|>"])
    back = pickle.loads(pickle.dumps(tok))
    assert back == tok and back.merges == tok.merges
    assert back.encode(" lowest<|e|>", allowed_special="all") == tok.encode(" lowest<|e|>", allowed_special="all")


def _encode_in_child(q):
    enc = bytepair.get_encoding("cl100k_base")
    q.put(enc.encode_batch(["hello world", "fork safe"] * 4, num_threads=2))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12+ warns about fork with threads
def test_batch_after_fork_does_not_hang():
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    enc = bytepair.get_encoding("cl100k_base")
    want = enc.encode_batch(["hello world", "fork safe"] * 4, num_threads=2)  # pools exist in the parent
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_encode_in_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) == want
    finally:
        p.join(timeout=60)
        if p.is_alive():
            p.kill()
    assert p.exitcode == 0
