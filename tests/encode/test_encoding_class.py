"""``bytepair.Encoding`` against ``tiktoken.Encoding``: the same constructor
(tiktoken's README recipe for adding special tokens), the same ids, pickling,
and the ``explicit_n_vocab`` checks."""

from __future__ import annotations

import pickle

import pytest

import bytepair
from bytepair.errors import VocabError
from conftest import CORPORA, corpus, tiktoken_encoding

IM = {"<|im_start|>": 100264, "<|im_end|>": 100265}


def _recipe(module, base):
    """tiktoken's README recipe, written against ``module`` (tiktoken or bytepair)."""
    return module.Encoding(
        name="cl100k_im",
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens={**base._special_tokens, **IM},
    )


@pytest.fixture(scope="module")
def pair():
    tiktoken = pytest.importorskip("tiktoken")
    ours = _recipe(bytepair, bytepair.get_encoding("cl100k_base"))
    theirs = _recipe(tiktoken, tiktoken_encoding("cl100k_base"))
    return ours, theirs


@pytest.mark.parametrize("name", CORPORA)
def test_readme_recipe_gives_tiktoken_ids(pair, name):
    ours, theirs = pair
    text = corpus(name)
    chat = f"<|im_start|>user\n{text[:2000]}<|im_end|><|im_start|>assistant\n{text[2000:4000]}<|endoftext|>"
    assert isinstance(ours, bytepair.Tokenizer)
    assert ours.encode(text) == theirs.encode(text)
    assert ours.encode(chat, allowed_special="all") == theirs.encode(chat, allowed_special="all")
    assert ours.encode(chat, allowed_special={"<|im_start|>"}, disallowed_special=()) == \
        theirs.encode(chat, allowed_special={"<|im_start|>"}, disallowed_special=())
    with pytest.raises(ValueError, match="im_start"):
        ours.encode(chat)  # special-token text raises unless allowed, as in tiktoken
    assert ours.decode(theirs.encode(chat, allowed_special="all")) == chat


def test_attributes_match_tiktoken(pair):
    ours, theirs = pair
    assert (ours.name, ours.n_vocab, ours.max_token_value, ours.eot_token) == \
        (theirs.name, theirs.n_vocab, theirs.max_token_value, theirs.eot_token)
    assert ours._special_tokens == theirs._special_tokens and ours.special_tokens_set == theirs.special_tokens_set
    assert ours._pat_str == theirs._pat_str
    assert repr(ours) == "<Encoding 'cl100k_im'>" == repr(theirs)


def test_pickle_round_trip_keeps_the_class_and_ids(pair):
    ours, _ = pair
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is bytepair.Encoding and back.name == "cl100k_im"
    text = "<|im_start|>hi there<|im_end|>"
    assert back.encode(text, allowed_special="all") == ours.encode(text, allowed_special="all")
    assert back._special_tokens == ours._special_tokens and back == ours


def test_special_id_far_above_the_ranks_like_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    base, ref = bytepair.get_encoding("r50k_base"), tiktoken_encoding("r50k_base")
    kw = {"name": "custom_enc", "special_tokens": {"<|pickle|>": 100_000}}
    ours = bytepair.Encoding(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, **kw)
    theirs = tiktoken.Encoding(pat_str=ref._pat_str, mergeable_ranks=ref._mergeable_ranks, **kw)
    back = pickle.loads(pickle.dumps(ours))
    for enc in (ours, back):
        assert enc.encode("<|pickle|> hello", allowed_special="all") == \
            theirs.encode("<|pickle|> hello", allowed_special="all") == [100_000, 23748]
        assert enc.max_token_value == theirs.max_token_value == 100_000


def test_explicit_n_vocab_checks_like_tiktoken():
    tiktoken = pytest.importorskip("tiktoken")
    base, ref = bytepair.get_encoding("r50k_base"), tiktoken_encoding("r50k_base")
    good = {"name": "r50k", "special_tokens": {"<|endoftext|>": 50256}}
    for n_vocab in (50256, 50258):  # the count is off by one either way
        with pytest.raises(AssertionError):
            tiktoken.Encoding(pat_str=ref._pat_str, mergeable_ranks=ref._mergeable_ranks, explicit_n_vocab=n_vocab,
                              **good)
        with pytest.raises(AssertionError, match=f"explicit_n_vocab is {n_vocab:,}") as e:
            bytepair.Encoding(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, explicit_n_vocab=n_vocab,
                              **good)
        assert isinstance(e.value, VocabError)  # and a ValueError, as every bytepair input error
    # the right count, but the largest id is not n_vocab - 1
    gap = {"name": "r50k", "special_tokens": {"<|endoftext|>": 50300}}
    with pytest.raises(AssertionError):
        tiktoken.Encoding(pat_str=ref._pat_str, mergeable_ranks=ref._mergeable_ranks, explicit_n_vocab=50257, **gap)
    with pytest.raises(AssertionError, match="largest id is 50,300"):
        bytepair.Encoding(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, explicit_n_vocab=50257, **gap)
    enc = bytepair.Encoding(pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks, explicit_n_vocab=50257,
                            **good)
    assert enc.n_vocab == 50257 and enc.encode("hello world") == [31373, 995]


def test_pat_str_is_a_regex_not_a_pattern_name():
    base = bytepair.get_encoding("gpt2")
    enc = bytepair.Encoding("words", pat_str=r"\w+|\W", mergeable_ranks=base._mergeable_ranks, special_tokens={})
    assert enc.pattern == r"\w+|\W"
    with pytest.raises(bytepair.PatternError):
        bytepair.Encoding("bad", pat_str="(", mergeable_ranks=base._mergeable_ranks, special_tokens={})
