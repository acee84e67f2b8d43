"""tiktoken's whole ``Encoding`` surface, on every encoding of its registry,
against tiktoken itself: random excerpts of the real corpora (tests/data),
some with a special token's text spliced in, under random special-token
policies. Errors must agree in kind (bytepair's error classes subclass the
builtin ones tiktoken raises)."""

from __future__ import annotations

import random

import pytest

import bytepair
from conftest import CORPORA, tiktoken_encoding

KINDS = (KeyError, ValueError, TypeError, OverflowError)


def outcome(fn, *args, **kwargs):
    """``("ok", result)`` of ``fn(*args, **kwargs)``, or ``("error", builtin kind)`` when it raises."""
    try:
        out = fn(*args, **kwargs)
    except KINDS as e:
        return "error", next(k.__name__ for k in KINDS if isinstance(e, k))
    return "ok", out.tolist() if hasattr(out, "tolist") else out


def unstable(enc, text, allowed, disallowed):
    stable, completions = enc.encode_with_unstable(text, allowed_special=allowed, disallowed_special=disallowed)
    return stable, sorted(map(tuple, completions))


@pytest.mark.parametrize("name", bytepair.list_encoding_names())
def test_every_method_agrees_on_real_text(name, corpora):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    for attr in ["n_vocab", "eot_token", "max_token_value", "special_tokens_set", "_pat_str"]:
        assert getattr(ours, attr) == getattr(ref, attr), attr
    specials = sorted(ref.special_tokens_set)
    texts = [corpora[c] for c in CORPORA]
    rnd = random.Random(name)
    for _ in range(40):
        t = rnd.choice(texts)
        a = rnd.randrange(len(t))
        s = t[a:a + rnd.randrange(0, 300)]
        if rnd.random() < 0.4:
            k = rnd.randrange(len(s) + 1)
            s = s[:k] + rnd.choice(specials) + s[k:]
        allowed = rnd.choice([set(), "all", set(specials[:1])])
        disallowed = rnd.choice(["all", (), set(specials[-1:])])
        policy = {"allowed_special": allowed, "disallowed_special": disallowed}
        for method in ["encode", "encode_to_numpy"]:
            assert outcome(getattr(ours, method), s, **policy) == outcome(getattr(ref, method), s, **policy), \
                (method, s, policy)
        assert outcome(unstable, ours, s, allowed, disallowed) == outcome(unstable, ref, s, allowed, disallowed), s
        assert ours.encode_ordinary(s) == ref.encode_ordinary(s)
        assert ours._encode_only_native_bpe(s) == ref._encode_only_native_bpe(s)
        data = s.encode()
        if data:  # tiktoken 0.14 panics on empty bytes
            assert ours._encode_single_piece(data) == ref._encode_single_piece(data)
        cut = data[:rnd.randrange(len(data) + 1)]  # may end inside a character
        assert ours._encode_bytes(cut) == ref._encode_bytes(cut)
        ids = ref.encode(s, allowed_special="all")
        assert ours.decode(ids) == ref.decode(ids)
        assert ours.decode_bytes(ids) == ref.decode_bytes(ids)
        assert ours.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
        assert ours.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
        for i in ids[:5]:
            assert ours.decode_single_token_bytes(i) == ref.decode_single_token_bytes(i)
            assert ours.is_special_token(i) == ref.is_special_token(i)
            b = ref.decode_single_token_bytes(i)
            assert outcome(ours.encode_single_token, b) == outcome(ref.encode_single_token, b)
    batch = [rnd.choice(texts)[:rnd.randrange(100)] for _ in range(20)]
    assert ours.encode_batch(batch) == ref.encode_batch(batch)
    assert ours.encode_ordinary_batch(batch) == ref.encode_ordinary_batch(batch)
    ids = ref.encode_batch(batch)
    assert ours.decode_batch(ids) == ref.decode_batch(ids)
    assert ours.decode_bytes_batch(ids) == ref.decode_bytes_batch(ids)
    for bad in [-1, ref.n_vocab, 2**32]:
        assert outcome(ours.decode, [bad])[0] == outcome(ref.decode, [bad])[0] == "error", bad
