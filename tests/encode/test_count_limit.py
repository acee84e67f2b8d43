"""count(text, limit=n) reads a head of the text and decides from it: the
result must be exactly ``min(len(encode(text)), n + 1)`` on every text, with
heads cut anywhere (inside words, special tokens, surrogate pairs)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import Tokenizer
from conftest import CORPORA, HYPOTHESIS_SCALE, corpus

ENCS = ["gpt2", "cl100k_base", "o200k_base"]
EOT = "<|endoftext|>"


def oracle(enc, text, limit, **kw):
    return min(len(enc.encode(text, **kw)), limit + 1)


@pytest.mark.parametrize("name", ENCS)
def test_count_limit_matches_encode_on_corpora(name):
    enc = bytepair.get_encoding(name)
    rnd = random.Random(hash(name) % 1000)
    texts = [corpus(c) for c in CORPORA]
    for i in range(300):
        t = rnd.choice(texts)
        a = rnd.randrange(len(t))
        s = t[a:a + rnd.randrange(1, 60_000)]
        if i % 3 == 1:  # long stretches without spaces: few safe cuts
            s = s.replace(" ", "")
        kw = {}
        if i % 3 == 2:  # special tokens here and there, allowed
            s = s.replace("\n", EOT, rnd.randrange(1, 50))
            kw = {"allowed_special": "all"}
        limit = rnd.choice([0, 1, 5, 100, 511, 512, 2000, rnd.randrange(20_000)])
        assert enc.count(s, limit=limit, **kw) == oracle(enc, s, limit, **kw), (name, i, a, len(s), limit)


PARTS = ["a", "ab", " ", "  ", "\n", "\n\n", "1", "23", "한국", "é", "\u0301", "😀", "'s", ".", "<|", "endoftext",
         "|>", EOT, "<|endoftext", "x" * 50, "\ud83d\ude00", "\udc00"]


@settings(max_examples=100 * HYPOTHESIS_SCALE)
@given(parts=st.lists(st.sampled_from(PARTS), min_size=1, max_size=40), reps=st.integers(100, 600),
       limit=st.integers(0, 3000), name=st.sampled_from(ENCS), allowed=st.booleans())
def test_count_limit_matches_encode(parts, reps, limit, name, allowed):
    enc = bytepair.get_encoding(name)
    # a cycle of parts repeated past the first head (4096 characters), so
    # heads end at every offset of the cycle
    text = "".join(parts) * reps
    kw = {"allowed_special": "all"} if allowed else {"disallowed_special": ()}
    assert enc.count(text, limit=limit, **kw) == oracle(enc, text, limit, **kw)



def test_disallowed_special_is_looked_for_in_the_part_read():
    enc = bytepair.get_encoding("o200k_base")
    with pytest.raises(bytepair.errors.DisallowedSpecialError):
        enc.count(EOT + " word" * 10_000, limit=10)
    # the limit binds long before the special token: it is not read
    assert enc.count(" word" * 10_000 + EOT, limit=10) == 11
    with pytest.raises(bytepair.errors.DisallowedSpecialError):
        enc.count(" word" * 10_000 + EOT, limit=10**6)


@pytest.mark.parametrize("pattern", [None, r"\S+|\s+"])
def test_count_limit_without_safe_cuts(pattern):
    # no pre-tokenizer safe cuts: the whole text is read, still exact
    base = bytepair.get_encoding("gpt2")
    tok = Tokenizer(base.token_bytes_list, pattern=pattern)
    text = "ab cd ef gh\n" * 2000
    for limit in (0, 7, 100, 10**4):
        assert tok.count(text, limit=limit) == min(len(tok.encode(text)), limit + 1)


def test_huge_limit_does_not_bind():
    enc = bytepair.get_encoding("cl100k_base")
    text = "hello world " * 100
    assert enc.count(text, limit=2**70) == enc.count(text) == 201
    assert enc.count(text, limit=4 * len(text)) == 201
    assert enc.count("", limit=0) == 0
