"""Property tests of encoding and decoding (hypothesis, derandomized: every run tries
the same examples, so a failure reproduces; the falsifying example is printed).

* ``decode(encode(s)) == s`` for any str without lone surrogates;
* equality with tiktoken for the bundled encodings on arbitrary text: lone
  surrogates, surrogate pairs written as two code units, control characters,
  every Unicode category, very long words and special-token look-alikes;

Lone surrogates follow tiktoken exactly: the text goes through
``encode("utf-16", "surrogatepass").decode("utf-16", "replace")``, so a lone
surrogate becomes U+FFFD and a high+low pair becomes the character it encodes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from conftest import ENCODINGS, no_panic, tiktoken_encoding
from conftest import HYPOTHESIS_SCALE as SCALE

SETTINGS = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}

SPECIALS = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
# text that looks like a special token but is not one
LOOKALIKES = [
    "<|endoftext", "endoftext|>", "<|endoftext |>", "<| endoftext|>", "<|ENDOFTEXT|>",
    "<|endo\u200bftext|>", "\uff1c|endoftext|\uff1e", "<<|endoftext|>", "<|endoftext||>",
    "<|", "|>", "<|im_start|>", "<|fim_pre", "<s>", "</s>", "[CLS]",
]
FRAGMENTS = [
    " ", "  ", "\n", "\r\n", "\r", "\t", "\x00", "\x0b", "\x1b[0m", "\u2028", "\u00a0", "\u3000",
    "'s", "'S", "'ll", "'VE", "’t", "123", "1234567", "٣٤٥", "½", "Ⅻ", "a", "Z", "ǅ", "ß",
    "가나다", "한국어", "토큰", "日本語", "Ελληνικά", "русский", "हिन्दी", "عربى", "e\u0301",
    "😀", "👩\u200d👩\u200d👧", "🇰🇷", "\U0001f3fb", "\ufeff", "\ufffd", "\U0010ffff",
    "http://x.y/z?a=1", "camelCaseWord", "HTTPServer", "__init__", "...", "!!!", "/*",
]

# any code point, surrogates included
any_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
no_surrogate_char = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())


@st.composite
def long_word(draw):
    """A long run of one or two characters (letters, digits, spaces, emoji...)."""
    unit = draw(st.text(alphabet=no_surrogate_char, min_size=1, max_size=2))
    return unit * draw(st.integers(50, 400))


def mixed(char_strategy):
    """Text stitched from arbitrary characters, fragments, specials and look-alikes."""
    part = st.one_of(
        st.text(alphabet=char_strategy, max_size=12),
        st.sampled_from(FRAGMENTS),
        st.sampled_from(LOOKALIKES),
        st.sampled_from(SPECIALS),
        long_word(),
    )
    return st.lists(part, max_size=12).map("".join)


text_no_surrogates = st.one_of(st.text(alphabet=no_surrogate_char), mixed(no_surrogate_char))
text_any = st.one_of(
    st.text(alphabet=any_char),
    mixed(any_char),
    # surrogate pairs as two code units, and lone halves
    st.lists(st.one_of(surrogate, st.sampled_from(["a", " ", "😀", "\ud83d\ude00"])), max_size=8).map("".join),
)


@pytest.fixture(scope="module")
def encs():
    return {name: bytepair.get_encoding(name) for name in ENCODINGS}


@pytest.mark.parametrize("name", ENCODINGS)
def test_roundtrip(name, encs):
    enc = encs[name]

    @settings(max_examples=150 * SCALE, **SETTINGS)
    @given(text_no_surrogates)
    def check(s):
        ids = no_panic(enc.encode_ordinary, s)
        assert enc.decode(ids) == s
        assert enc.decode_bytes(ids) == s.encode("utf-8")
        assert no_panic(enc.encode, s, allowed_special="all") == no_panic(
            enc.encode, s, allowed_special="all", disallowed_special=()
        )
        assert enc.decode(no_panic(enc.encode, s, allowed_special="all")) == s

    check()


def _tiktoken_outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except ValueError:  # tiktoken's disallowed-special error
        return ("raise", None)


@pytest.mark.parametrize("name", ENCODINGS)
def test_equals_tiktoken(name, encs):
    enc = encs[name]
    tt = tiktoken_encoding(name)

    @settings(max_examples=200 * SCALE, **SETTINGS)
    @given(text_any)
    def check(s):
        assert no_panic(enc.encode_ordinary, s) == tt.encode_ordinary(s)
        assert no_panic(enc.encode, s, allowed_special="all") == tt.encode(s, allowed_special="all")
        ours = _tiktoken_outcome(no_panic, enc.encode, s)
        theirs = _tiktoken_outcome(tt.encode, s)
        assert ours == theirs
        ids = tt.encode(s, disallowed_special=())
        assert no_panic(enc.decode, ids) == tt.decode(ids)
        assert no_panic(enc.encode_batch, [s, s[::-1]], disallowed_special=()) == [
            ids, tt.encode(s[::-1], disallowed_special=())
        ]

    check()


@pytest.mark.parametrize("name", ENCODINGS)
def test_decode_arbitrary_ids_equals_tiktoken(name, encs):
    enc = encs[name]
    tt = tiktoken_encoding(name)
    specials = sorted(enc.special_tokens.values())
    ids_st = st.lists(st.one_of(st.integers(0, len(enc.token_bytes_list) - 1), st.sampled_from(specials)), max_size=40)

    @settings(max_examples=200 * SCALE, **SETTINGS)
    @given(ids_st)
    def check(ids):
        assert no_panic(enc.decode_bytes, ids) == tt.decode_bytes(ids)
        assert no_panic(enc.decode, ids) == tt.decode(ids)

    check()


@pytest.mark.parametrize("name", ENCODINGS)
def test_unknown_ids_raise_keyerror(name, encs):
    enc = encs[name]
    known = set(range(len(enc.token_bytes_list))) | set(enc.special_tokens.values())

    @settings(max_examples=100 * SCALE, **SETTINGS)
    @given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=5))
    def check(ids):
        if all(i in known for i in ids):
            no_panic(enc.decode_bytes, ids)
            return
        with pytest.raises((KeyError, ValueError, OverflowError, TypeError)) as e:
            no_panic(enc.decode_bytes, ids)
        assert str(e.value)

    check()
