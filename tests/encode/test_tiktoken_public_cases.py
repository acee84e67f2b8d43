"""tiktoken's own public test cases (tests/test_encoding.py, test_offsets.py,
test_misc.py, test_pickle.py of tiktoken 0.14), rewritten for bytepair: the same
calls and expected values, with ``import tiktoken`` swapped for ``bytepair``
(``tiktoken.get_encoding`` -> ``bytepair.get_encoding``). Where tiktoken's case
uses random inputs (hypothesis), the tiktoken build from the same rank file is the
oracle."""

from __future__ import annotations

import functools
import pickle

import pytest

import bytepair as tiktoken  # the swap: everything below is written against tiktoken's API
from conftest import tiktoken_encoding

ALL = ["gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
SOME = ["r50k_base", "cl100k_base", "o200k_base"]


def test_simple():
    enc = tiktoken.get_encoding("gpt2")
    assert enc.encode("hello world") == [31373, 995]
    assert enc.decode([31373, 995]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]

    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.decode([15339, 1917]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]

    for enc_name in tiktoken.list_encoding_names():
        enc = tiktoken.get_encoding(enc_name)
        for token in range(min(10_000, enc.max_token_value - 1)):
            assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token


def test_simple_repeated():
    enc = tiktoken.get_encoding("gpt2")
    assert enc.encode("0") == [15]
    assert enc.encode("00") == [405]
    assert enc.encode("000") == [830]
    assert enc.encode("0000") == [2388]
    assert enc.encode("00000") == [20483]
    assert enc.encode("000000") == [10535]
    assert enc.encode("0000000") == [24598]
    assert enc.encode("00000000") == [8269]
    assert enc.encode("000000000") == [10535, 830]
    assert enc.encode("0000000000") == [8269, 405]
    assert enc.encode("00000000000") == [8269, 830]
    assert enc.encode("000000000000") == [8269, 2388]
    assert enc.encode("0000000000000") == [8269, 20483]
    assert enc.encode("00000000000000") == [8269, 10535]
    assert enc.encode("000000000000000") == [8269, 24598]
    assert enc.encode("0000000000000000") == [25645]
    assert enc.encode("00000000000000000") == [8269, 10535, 830]


def test_simple_regex():
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode("rer") == [38149]
    assert enc.encode("'rer") == [2351, 81]
    assert enc.encode("today\n ") == [31213, 198, 220]
    assert enc.encode("today\n \n") == [31213, 27907]
    assert enc.encode("today\n  \n") == [31213, 14211]


def test_basic_encode():
    enc = tiktoken.get_encoding("r50k_base")
    assert enc.encode("hello world") == [31373, 995]

    enc = tiktoken.get_encoding("p50k_base")
    assert enc.encode("hello world") == [31373, 995]

    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.encode(" \x850") == [220, 126, 227, 15]


def test_encode_empty():
    enc = tiktoken.get_encoding("r50k_base")
    assert enc.encode("") == []


def test_encode_bytes():
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc._encode_bytes(b" \xec\x8b\xa4\xed") == [62085]
    for i in range(10):
        bytestring = b"\x80" * i
        assert enc.decode_bytes(enc._encode_bytes(bytestring)) == bytestring


def test_encode_surrogate_pairs():
    enc = tiktoken.get_encoding("cl100k_base")

    assert enc.encode("👍") == [9468, 239, 235]
    # surrogate pair gets converted to codepoint
    assert enc.encode("\ud83d\udc4d") == [9468, 239, 235]

    # lone surrogate just gets replaced
    assert enc.encode("\ud83d") == enc.encode("�")


@pytest.mark.parametrize("name", SOME)
def test_catastrophically_repetitive(name):
    enc = tiktoken.get_encoding(name)
    for c in ["^", "0", "a", "'s", " ", "\n"]:
        big_value = c * 10_000
        assert big_value == enc.decode(enc.encode(big_value))

        big_value = " " + big_value
        assert big_value == enc.decode(enc.encode(big_value))

        big_value = big_value + "\n"
        assert big_value == enc.decode(enc.encode(big_value))


@pytest.mark.parametrize("name", ALL)
def test_basic_roundtrip(name):
    enc = tiktoken.get_encoding(name)
    for value in (
        "hello",
        "hello ",
        "hello  ",
        " hello",
        " hello ",
        " hello  ",
        "hello world",
        "请考试我的软件！12345",
    ):
        assert value == enc.decode(enc.encode(value))
        assert value == enc.decode(enc.encode_ordinary(value))


@pytest.mark.parametrize("name", ALL)
def test_single_token_roundtrip(name):
    enc = tiktoken.get_encoding(name)
    for token in range(enc.n_vocab):
        try:
            token_bytes = enc.decode_single_token_bytes(token)
        except KeyError:
            continue
        assert enc.encode_single_token(token_bytes) == token


def test_special_token():
    enc = tiktoken.get_encoding("cl100k_base")

    eot = enc.encode_single_token("<|endoftext|>")
    assert eot == enc.eot_token
    fip = enc.encode_single_token("<|fim_prefix|>")
    fim = enc.encode_single_token("<|fim_middle|>")

    text = "<|endoftext|> hello <|fim_prefix|>"
    assert eot not in enc.encode(text, disallowed_special=())
    with pytest.raises(ValueError):
        enc.encode(text)
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special="all")
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special={"<|endoftext|>"})
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special={"<|fim_prefix|>"})

    text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
    tokens = enc.encode(text, disallowed_special=())
    assert eot not in tokens
    assert fip not in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special="all", disallowed_special=())
    assert eot in tokens
    assert fip in tokens
    assert fim in tokens

    tokens = enc.encode(text, allowed_special="all", disallowed_special="all")
    assert eot in tokens
    assert fip in tokens
    assert fim in tokens

    tokens = enc.encode(text, allowed_special={"<|fim_prefix|>"}, disallowed_special=())
    assert eot not in tokens
    assert fip in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert eot in tokens
    assert fip not in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special={"<|fim_middle|>"}, disallowed_special=())
    assert eot not in tokens
    assert fip not in tokens
    assert fim in tokens


@pytest.mark.parametrize("name", SOME)
def test_batch_encode(name):
    enc = tiktoken.get_encoding(name)
    text1 = "hello world"
    text2 = "goodbye world"

    assert enc.encode_batch([text1]) == [enc.encode(text1)]
    assert enc.encode_batch([text1, text2]) == [enc.encode(text1), enc.encode(text2)]

    assert enc.encode_ordinary_batch([text1]) == [enc.encode_ordinary(text1)]
    assert enc.encode_ordinary_batch([text1, text2]) == [enc.encode_ordinary(text1), enc.encode_ordinary(text2)]


def test_is_special_token_and_token_byte_values():
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.is_special_token(enc.eot_token)
    assert not enc.is_special_token(enc.encode("hello")[0])
    ref = tiktoken_encoding("cl100k_base")
    assert enc.token_byte_values() == ref.token_byte_values()


# ---------------------------------------------------------------- test_offsets.py


def _common_prefix_len(a, b):
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    return i


def _token_offsets_reference(enc, tokens):
    text = enc.decode(tokens, errors="strict")
    res = []
    for i in range(len(tokens)):
        prefix = enc.decode(tokens[:i], errors="ignore")
        res.append(_common_prefix_len(text, prefix))
    return res


@pytest.mark.parametrize("name", SOME)
def test_hyp_offsets_like_reference(name):
    enc = tiktoken.get_encoding(name)
    texts = ["hello world", "I can eat glass", "我非常渴望与人工智能一起工作", "நடிகர் சூர்யா", "ied 4 ½ months", "가나다라", "👍👍 a"]
    for text in texts:
        tokens = enc.encode(text)
        assert enc.decode_with_offsets(tokens)[1] == _token_offsets_reference(enc, tokens)


def test_basic_offsets():
    enc = tiktoken.get_encoding("cl100k_base")

    prompt = "hello world"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 5]

    prompt = "hello world<|endoftext|> green cow"
    p, o = enc.decode_with_offsets(enc.encode(prompt, allowed_special="all"))
    assert p == prompt
    assert o == [0, 5, 11, 24, 30]

    prompt = "我非常渴望与人工智能一起工作"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13]

    # contains the interesting tokens b'\xe0\xae\xbf\xe0\xae' and b'\xe0\xaf\x8d\xe0\xae'
    # in which \xe0 is the start of a 3-byte UTF-8 character
    prompt = "நடிகர் சூர்யா"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12]

    # contains the interesting token b'\xa0\xe9\x99\xa4'
    # in which \xe9 is the start of a 3-byte UTF-8 character and \xa0 is a continuation byte
    prompt = " Ġ除"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 1]


# ---------------------------------------------------------------- test_misc.py and test_pickle.py


def test_encoding_for_model():
    enc = tiktoken.encoding_for_model("gpt2")
    assert enc.name == "gpt2"
    enc = tiktoken.encoding_for_model("text-davinci-003")
    assert enc.name == "p50k_base"
    enc = tiktoken.encoding_for_model("text-davinci-edit-001")
    assert enc.name == "p50k_edit"
    enc = tiktoken.encoding_for_model("gpt-3.5-turbo-0301")
    assert enc.name == "cl100k_base"
    enc = tiktoken.encoding_for_model("gpt-4")
    assert enc.name == "cl100k_base"
    enc = tiktoken.encoding_for_model("gpt-4o")
    assert enc.name == "o200k_base"
    enc = tiktoken.encoding_for_model("gpt-oss-120b")
    assert enc.name == "o200k_harmony"


def test_pickle():
    enc_old = tiktoken.get_encoding("r50k_base")
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")

    enc_old = tiktoken.Encoding(
        name="custom_enc",
        pat_str=enc_old._pat_str,
        mergeable_ranks=enc_old._mergeable_ranks,
        special_tokens={},
    )
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")


def test_attributes_other_libraries_read():
    enc = tiktoken.get_encoding("cl100k_base")
    ref = tiktoken_encoding("cl100k_base")
    assert enc.name == "cl100k_base"
    assert enc._pat_str == ref._pat_str
    assert enc._special_tokens == ref._special_tokens
    assert enc._mergeable_ranks == ref._mergeable_ranks
    # rebuilding an encoding from them, as libraries extending tiktoken do
    ext = tiktoken.Encoding(name="cl100k_im", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                            special_tokens={**enc._special_tokens, "<|im_start|>": 100264})
    assert ext.encode("<|im_start|>hi", allowed_special="all") == [100264, 6151]


def test_hashable_and_lru_cache():
    a = tiktoken.get_encoding("gpt2")
    b = pickle.loads(pickle.dumps(a))
    c = tiktoken.Tokenizer(a._mergeable_ranks, a._pat_str, a._special_tokens)
    assert a == c and hash(a) == hash(c)
    assert a == a.with_special_text("text") and hash(a) == hash(a.with_special_text("text"))
    assert {a: 1}[b] == 1
    calls = []

    @functools.lru_cache(maxsize=None)  # noqa: UP033 (the call libraries make)
    def vocab_size(enc):
        calls.append(enc)
        return enc.n_vocab

    assert vocab_size(a) == vocab_size(c) == 50257
    assert len(calls) == 1
    assert a != tiktoken.get_encoding("p50k_base")


@pytest.mark.parametrize("name", SOME + ["p50k_base"])  # p50k: a special token fills a gap in the ranks
def test_encode_with_unstable_like_tiktoken(name):
    enc, ref = tiktoken.get_encoding(name), tiktoken_encoding(name)
    for text in ["hello fanta", "hello world ", "def f():\n\t", "x = 1\n\n", "안녕하", "a<|endoftext|>", "<|endoftext|>",
                 "", "He said 'hel", "12345", "It is fine.", "na\u00efv", "caf\u00e9", "emoji \U0001f642", "x\u00ff",
                 "end  ", "a<|endoftext|>  ", "<|endoftext|>\n\n", "hello \n\n  ", "a <|endoftext|>b. \t"]:
        stable, completions = enc.encode_with_unstable(text, allowed_special="all")
        r_stable, r_completions = ref.encode_with_unstable(text, allowed_special="all")
        assert stable == r_stable
        assert sorted(map(tuple, completions)) == sorted(map(tuple, r_completions))
    # special-token text as plain text: its last piece is unstable like any other
    for text in ["a<|endoftext|>", "x <|endoftext|>  "]:
        got = enc.encode_with_unstable(text, disallowed_special=())
        want = ref.encode_with_unstable(text, disallowed_special=())
        assert got[0] == want[0] and sorted(map(tuple, got[1])) == sorted(map(tuple, want[1]))
    with pytest.raises(ValueError):
        enc.encode_with_unstable("<|endoftext|>")


@pytest.mark.parametrize("name", SOME)
def test_encode_bytes_like_tiktoken(name):
    import random

    enc, ref = tiktoken.get_encoding(name), tiktoken_encoding(name)
    rnd = random.Random(3)
    pool = [b"hello", b" world", b"\xec\x8b\xa4", b"\xed", b"\x80", b"\xff", b"  ", b"\n", b"12", b"'s", "한".encode()]
    for _ in range(300):
        data = b"".join(rnd.choice(pool) for _ in range(rnd.randrange(0, 8)))
        assert enc._encode_bytes(data) == ref._encode_bytes(data), data


@pytest.mark.parametrize("name", SOME)
def test_single_piece_and_native_bpe_like_tiktoken(name):
    enc, ref = tiktoken.get_encoding(name), tiktoken_encoding(name)
    for text in ["helloqqqq", " world", "안녕하세요 세계", "<|endoftext|>", "x" * 5000, "a\u00ff\U0001f642 \n\n\t"]:
        assert enc._encode_single_piece(text) == ref._encode_single_piece(text)
        assert enc._encode_single_piece(text.encode()) == ref._encode_single_piece(text.encode())
        assert enc._encode_only_native_bpe(text) == ref._encode_only_native_bpe(text)
    # bytes that are not UTF-8 are merged as they are
    assert enc._encode_single_piece(b"\xff\xec\x8b") == ref._encode_single_piece(b"\xff\xec\x8b")
    assert enc._encode_single_piece(b"") == []  # tiktoken 0.14 panics here
    with pytest.raises(TypeError):
        enc._encode_single_piece(12)
