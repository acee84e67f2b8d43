"""Pre-tokenization is exact: the core's hand-written scanners, the reference
(Python ``regex``) and tiktoken (Rust ``fancy-regex``) cut every text into the
same pieces.

tiktoken does not expose its pieces, so :func:`tiktoken_pieces` recovers them
with a vocabulary built for the purpose: the 256 bytes, every piece we expect,
and every concatenation of two neighbouring expected pieces. tiktoken looks a
piece up whole before merging, and merging never crosses a piece boundary, so

* if tiktoken's pieces are ours, each becomes one token, and
* if they differ, some token differs: a tiktoken piece that cuts one of ours
  yields a token that is not one of ours, and a tiktoken piece that joins
  several of ours is either in the vocabulary (one token) or merged until no
  adjacent pair is in it, which it cannot end as our pieces (their neighbouring
  pairs are all in the vocabulary).

So the decoded tokens equal our pieces exactly when the pieces agree.
"""

from __future__ import annotations

import itertools
import random
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import _core, patterns, reference
from conftest import optional

NAMES = ["gpt2", "cl100k", "o200k"]
PATTERN = {"gpt2": patterns.GPT2, "cl100k": patterns.CL100K, "o200k": patterns.O200K}

tiktoken = optional("tiktoken")


def tiktoken_pieces(name: str, text: str, expected: list) -> list:
    """tiktoken's pieces of ``text`` as bytes, recovered through a vocabulary made
    of ``expected`` (see the module docstring for why this is exact)."""
    ranks = {bytes([i]): i for i in range(256)}
    exp = [p.encode("utf-8") for p in expected]
    for p in exp:
        ranks.setdefault(p, len(ranks))
    for a, b in itertools.pairwise(exp):
        ranks.setdefault(a + b, len(ranks))
    enc = tiktoken.Encoding(name=f"pieces-{name}", pat_str=PATTERN[name], mergeable_ranks=ranks, special_tokens={})
    return [enc.decode_single_token_bytes(t) for t in enc.encode_ordinary(text)]


def assert_exact(name: str, text: str, *, against_tiktoken: bool = True) -> None:
    ours = _core.pretokenize(name, text)
    ref = reference.pretokenize(text, name)
    assert ours == ref, f"core vs reference ({name}) on {text!r}"
    assert "".join(ours) == text
    if against_tiktoken:
        assert tiktoken_pieces(name, text, ours) == [p.encode() for p in ours], f"core vs tiktoken ({name}) on {text!r}"


# ---------------------------------------------------------------- pattern strings


def test_pattern_strings_are_tiktokens(monkeypatch):
    from tiktoken_ext import openai_public

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
    monkeypatch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
    assert openai_public.gpt2()["pat_str"] == patterns.GPT2
    assert openai_public.cl100k_base()["pat_str"] == patterns.CL100K
    assert openai_public.o200k_base()["pat_str"] == patterns.O200K


# ---------------------------------------------------------------- examples with known answers


@pytest.mark.parametrize(
    "name, text, pieces",
    [
        # the seed's example (gpt2)
        ("gpt2", "I'm lowest 토큰", ["I", "'m", " lowest", " 토큰"]),
        # cl100k groups digits by three and keeps a space before digits apart
        ("cl100k", "x 12345", ["x", " ", "123", "45"]),
        # o200k keeps CamelCase words apart and takes contractions into the word
        ("o200k", "HelloWORLD don't", ["Hello", "WORLD", " don't"]),
        # \s+(?!\S): a run of spaces leaves its last space to the next word
        ("gpt2", "a   b", ["a", "  ", " b"]),
    ],
)
def test_known_splits(name, text, pieces):
    assert _core.pretokenize(name, text) == pieces
    assert reference.pretokenize(text, name) == pieces
    assert tiktoken_pieces(name, text, pieces) == [p.encode() for p in pieces]


def test_the_oracle_detects_a_wrong_split():
    # The vocabulary trick must notice both a cut and a join that tiktoken does not make.
    text = "hello world"
    assert tiktoken_pieces("gpt2", text, ["hel", "lo", " world"]) != [b"hel", b"lo", b" world"]
    assert tiktoken_pieces("gpt2", text, ["hello world"]) != [b"hello world"]


# ---------------------------------------------------------------- Unicode subtleties

# (?i) in the contractions uses simple case folding: 's' also matches U+017F
# LATIN SMALL LETTER LONG S; U+212A KELVIN SIGN folds to 'k', which no
# contraction uses, so it must *not* act as one.
FOLD_CASES = [
    "it'ſ", "IT'S", "we'LL", "we'Ll", "they'VE", "you'RE", "he'D", "I'M", "don'T",
    "x'\u212a", "'ſſ", "ʰ'S", "é'Re", "한'll", "'\u0301s", "A'\u017f'\u017f", "'s's",
]


@pytest.mark.parametrize("name", NAMES)
def test_case_folded_contractions(name):
    for text in FOLD_CASES:
        assert_exact(name, text)
        assert_exact(name, " " + text + " ")


def _every_category_samples(per_category: int = 6) -> dict:
    """A few code points of every Unicode general category (by Python's tables,
    which only decide what is sampled; the oracles decide what is right)."""
    rng = random.Random(4)
    by_cat: dict = {}
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        by_cat.setdefault(unicodedata.category(chr(cp)), []).append(chr(cp))
    out = {}
    for cat, chars in sorted(by_cat.items()):
        picks = {chars[0], chars[-1]} | set(rng.sample(chars, min(per_category, len(chars))))
        out[cat] = sorted(picks)
    return out


CONTEXTS = ["{c}", "{c}{c}", " {c}", "a{c}", "{c}a", "A{c}'s", "'{c}", "{c}\n", "1{c}2", " {c} ", "{c}  x", "ʰ{c}A"]


@pytest.mark.parametrize("name", NAMES)
def test_every_general_category(name):
    samples = _every_category_samples()
    assert len(samples) >= 29, sorted(samples)
    for chars in samples.values():
        parts = [ctx.format(c=c) for c in chars for ctx in CONTEXTS]
        for part in parts:
            assert_exact(name, part, against_tiktoken=False)
        # tiktoken on the whole mix at once (one Encoding per category)
        assert_exact(name, "".join(parts))
        assert_exact(name, "\n".join(parts))


# Code points whose class differs between Unicode 16.0 (tiktoken) and 17.0
# (today's Python ``regex``): the reference pins them; check it does.
UNICODE17_CHANGES = [0x295, 0x88F, 0xC5C, 0x1ACF, 0xA7CE, 0xA7CF, 0xA7F1, 0x10940, 0x10EC5, 0x11B60,
                     0x11DD9, 0x11DE0, 0x16EA0, 0x16EBB, 0x16FF2, 0x16FF4, 0x1E6E3, 0x1E6FF, 0x323B0]


@pytest.mark.parametrize("name", NAMES)
def test_unicode_version_is_tiktokens(name):
    parts = [ctx.format(c=chr(cp)) for cp in UNICODE17_CHANGES for ctx in CONTEXTS]
    assert_exact(name, "".join(parts))
    assert_exact(name, " ".join(parts))


CLASSES = [r"\p{L}", r"\p{N}", r"\s", r"\p{Lu}", r"\p{Lt}", r"\p{Lm}", r"\p{Lo}", r"\p{M}", r"\p{Ll}",
           r"(?i:s)", r"(?i:t)", r"(?i:m)", r"(?i:d)", r"(?i:l)", r"(?i:v)", r"(?i:r)", r"(?i:e)"]


@pytest.mark.slow
def test_character_classes_match_tiktoken_on_every_code_point():
    """The core's regex engine (whose classes the scanner tables are built from,
    checked code point by code point in the Rust tests) agrees with tiktoken's
    on every class the patterns use: same Unicode version, same case folding."""
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    ranks = {bytes([i]): i for i in range(256)}
    for cls in CLASSES:
        enc = tiktoken.Encoding(name="cls", pat_str=f"(?:{cls})+", mergeable_ranks=ranks, special_tokens={})
        theirs = enc.decode(enc.encode_ordinary(text))  # tiktoken drops what the class does not match
        # bytepair keeps it: the pieces alternate between runs of the class and runs of the rest
        pieces = _core.pretokenize(f"(?:{cls})+", text)
        assert "".join(pieces) == text
        assert theirs in ("".join(pieces[0::2]), "".join(pieces[1::2])), cls


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_every_code_point_scanner_vs_regex_engine(name):
    """Every code point, next to its neighbours and in a word context: the
    scanner against the same pattern run by the core's fancy-regex."""
    cps = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    wrapped = f"(?:{PATTERN[name]})"  # not byte-identical, so it runs on fancy-regex
    for text in ("".join(cps), "".join(c + "a'S " for c in cps[::7])):
        assert _core.pretokenize(name, text) == _core.pretokenize(wrapped, text)


# ---------------------------------------------------------------- hypothesis

HEAVY = list("aZsSlLvVeErRdDtTmMk09 \t\n\r\x0b\x0c'/.!?-_,;:()[]{}\"") + [
    "\u017f", "\u212a", "é", "É", "\u01c5", "\u02b0", "한", "中", "\u0301", "\u0903", "\u20dd", "\u0663",
    "\u216b", "\u00bd", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "€", "😀", "\ue000", "\u0378",
    "\U0001d400", "\U0001d7ce", "\U00010428", "\u2019", "\x00", "\x1c",
]
WORDS = ["Hello", "WORLD", "camelCase", "XMLHttp", "iPhone", "'s", "'LL", "'ve", "'ſ", "ſ", "ʰ", "\u0301",
         "한국어", "日本語", "Привет", "नमस्ते", "ǅ", " ", "  ", "   ", "\n", "\r\n", "\n\n", " \n ", "\t",
         "123", "4567", "٣٤", "//", "...", "!?", "$", "/", "\u00a0", "\u3000", "😀", "e\u0301"]

heavy_text = st.text(alphabet=st.sampled_from(HEAVY), max_size=40)
word_text = st.lists(st.sampled_from(WORDS), max_size=16).map("".join)
any_text = st.text(max_size=40)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=st.one_of(any_text, heavy_text, word_text))
def test_hypothesis_core_reference_tiktoken(name, text):
    assert_exact(name, text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(any_text, heavy_text, word_text))
def test_hypothesis_core_vs_reference(name, text):
    assert_exact(name, text, against_tiktoken=False)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(text=st.one_of(heavy_text, word_text, any_text))
def test_spans_and_safe_cuts(name, text):
    pieces = _core.pretokenize(name, text)
    data = text.encode()
    spans = _core.pretokenize_spans(name, text)
    assert [data[s:e].decode() for s, e in spans] == pieces
    assert _core.pretokenize_count(name, text) == len(pieces)


# ---------------------------------------------------------------- real text


@pytest.mark.parametrize("name", NAMES)
def test_corpora(name, corpora):
    for fname, text in corpora.items():
        ours = _core.pretokenize(name, text)
        assert ours == reference.pretokenize(text, name), fname
        assert tiktoken_pieces(name, text, ours) == [p.encode() for p in ours], fname


# ---------------------------------------------------------------- hostile input

N = 1_000_000


@pytest.mark.parametrize("name", NAMES)
def test_hostile_inputs(name):
    # tiktoken itself overflows its stack on the first of these; the answers come
    # from the patterns' definitions.
    assert _core.pretokenize(name, " " * N + "x") == [" " * (N - 1), " x"]
    assert _core.pretokenize(name, " " * N) == [" " * N]
    assert _core.pretokenize(name, "x" * N) == ["x" * N]
    assert _core.pretokenize(name, "\n" * N) == ["\n" * N]
    digits = _core.pretokenize(name, "7" * N)
    assert digits == (["7" * N] if name == "gpt2" else ["777"] * (N // 3) + ["7"])
    assert _core.pretokenize(name, "\u0301" * N) == ["\u0301" * N]
    assert _core.pretokenize(name, "한" * N) == ["한" * N]
    assert _core.pretokenize_count(name, "ʰ" + "A" * N) == (2 if name == "o200k" else 1)
    assert _core.pretokenize_count(name, " \n" * N + "x") >= 1
    assert _core.pretokenize_count(name, "'" * N) == 1


@pytest.mark.parametrize("name", NAMES)
def test_hostile_inputs_agree_with_reference(name):
    for text in [" " * 5000 + "x", "\n \n" * 2000 + "x", "ʰ" + "A" * 5000 + "a", "'s" * 3000, "1" * 5000 + " ",
                 ("\u0301" * 50 + " ") * 100]:
        assert _core.pretokenize(name, text) == reference.pretokenize(text, name)


# ---------------------------------------------------------------- custom patterns and errors


def test_custom_pattern_and_whole_text():
    assert _core.pretokenize(r"\w+|\s+", "ab  cd") == ["ab", "  ", "cd"]
    # unmatched text is a piece of its own (tiktoken would drop it; bytepair never loses text)
    assert _core.pretokenize(r"\d+", "a1b22") == ["a", "1", "b", "22"]
    assert _core.pretokenize(None, "ab cd") == ["ab cd"]
    assert _core.pretokenize(None, "") == []


def test_invalid_pattern_raises_a_clear_error():
    from bytepair import errors

    with pytest.raises(errors.PatternError, match="invalid pre-tokenization pattern"):
        _core.pretokenize("(", "x")
