"""Special tokens as tiktoken has them (allowed_special / disallowed_special),
bytepair's special_text policy on every method, and encode_single_token."""

from __future__ import annotations

import pickle

import pytest

import bytepair
from bytepair.errors import DisallowedSpecialError
from conftest import ENCODINGS, tiktoken_encoding


@pytest.mark.parametrize("name", ENCODINGS)
def test_special_semantics_match_tiktoken(name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    specials = sorted(ours.special_tokens_set)
    text = f"a{specials[0]}b {specials[-1]}c<|endoftext"
    with pytest.raises(ValueError):
        ref.encode(text)
    with pytest.raises(DisallowedSpecialError) as e:
        ours.encode(text)
    assert "allowed_special" in str(e.value) and "disallowed_special" in str(e.value)
    with pytest.raises(DisallowedSpecialError):
        ours.encode_to_numpy(text)  # its fast path for default arguments too
    for kw in [
        {"allowed_special": "all"},
        {"disallowed_special": ()},
        {"allowed_special": {specials[0]}, "disallowed_special": ()},
        {"allowed_special": {specials[-1]}, "disallowed_special": ()},
        {"allowed_special": set(specials), "disallowed_special": "all"},
    ]:
        assert ours.encode(text, **kw) == ref.encode(text, **kw), kw
        assert ours.count(text, **kw) == len(ref.encode(text, **kw)), kw
        assert ours.encode_to_numpy(text, **kw).tolist() == ref.encode(text, **kw), kw
        assert ours.encode_batch([text, "x"], **kw) == [ref.encode(text, **kw), ref.encode("x", **kw)], kw
    if len(specials) > 1:
        # allowing one still raises for the others (tiktoken's default)
        with pytest.raises(ValueError):
            ours.encode(text, allowed_special={specials[0]})


def test_special_text_policy_everywhere():
    enc = bytepair.get_encoding("gpt2").with_special_text("text")
    ref = tiktoken_encoding("gpt2")
    text = "hi <|endoftext|> there"
    want = ref.encode(text, disallowed_special=())
    assert enc.encode(text) == want
    assert enc.encode_batch([text]) == [want]
    assert enc.count(text) == len(want)
    assert enc.count_batch([text]) == [len(want)]
    assert enc.encode_to_numpy(text).tolist() == want
    # explicit arguments still win
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    with pytest.raises(DisallowedSpecialError):
        enc.encode(text, disallowed_special="all")
    # the shared bundled object keeps tiktoken's default
    with pytest.raises(DisallowedSpecialError):
        bytepair.get_encoding("gpt2").encode(text)


def test_special_text_policy_survives_pickle_and_save(tmp_path):
    enc = bytepair.get_encoding("gpt2").with_special_text("text")
    back = pickle.loads(pickle.dumps(enc))
    assert back.special_text == "text" and back.encode("<|endoftext|>") == enc.encode("<|endoftext|>")
    tok = bytepair.Tokenizer([bytes([b]) for b in range(256)], "gpt2", {"<s>": 256}, special_text="text")
    tok.save(tmp_path / "t.json")
    assert bytepair.load(tmp_path / "t.json").encode("<s>") == [60, 115, 62]


def test_disallowed_non_special_string_is_searched_like_tiktoken():
    ours, ref = bytepair.get_encoding("gpt2"), tiktoken_encoding("gpt2")
    with pytest.raises(ValueError):
        ref.encode("say foo", disallowed_special={"foo"})
    with pytest.raises(DisallowedSpecialError):
        ours.encode("say foo", disallowed_special={"foo"})
    assert ours.encode("say bar", disallowed_special={"foo"}) == ref.encode("say bar", disallowed_special={"foo"})


def test_encode_single_token():
    enc, ref = bytepair.get_encoding("cl100k_base"), tiktoken_encoding("cl100k_base")
    for t in ["hello", b" world", "<|endoftext|>", "<|fim_middle|>"]:
        assert enc.encode_single_token(t) == ref.encode_single_token(t)
    with pytest.raises(KeyError):
        enc.encode_single_token("hello world")
