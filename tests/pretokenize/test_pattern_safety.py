"""No silent data loss from patterns: names are names (or an error listing them),
the empty pattern is refused, and text a custom pattern does not match is its own
chunk in the core and the reference alike, so decode(encode(x)) == x."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core, patterns
from bytepair import reference as R
from bytepair.counts import ChunkCounts
from bytepair.errors import FormatError, PatternError
from conftest import corpus


@pytest.mark.parametrize(
    "name, want",
    [("gpt2", patterns.GPT2), ("GPT2", patterns.GPT2), ("r50k", patterns.GPT2), ("R50K_BASE", patterns.GPT2),
     ("p50k_base", patterns.GPT2), ("gpt4", patterns.CL100K), ("GPT-4", patterns.CL100K),
     ("Cl100K_Base", patterns.CL100K), ("gpt-4o", patterns.O200K), ("O200K", patterns.O200K)],
)
def test_names_and_aliases_any_case(name, want):
    assert patterns.resolve(name) == want


@pytest.mark.parametrize("word", ["the", "gpt5", "cl100", "o200k-base", "llama3"])
def test_a_word_that_is_no_name_is_an_error_listing_the_names(word):
    with pytest.raises(PatternError, match=r"unknown pattern name .*gpt2.*cl100k.*o200k.*gpt4"):
        patterns.resolve(word)
    with pytest.raises(PatternError, match="unknown pattern name"):
        bytepair.train("the cat sat on the mat", 260, pattern=word)
    with pytest.raises(PatternError, match="unknown pattern name"):
        ChunkCounts.from_texts(["the cat"], pattern=word)


def test_the_empty_pattern_is_refused_everywhere(tmp_path):
    with pytest.raises(PatternError, match="empty pattern"):
        patterns.resolve("")
    with pytest.raises(PatternError, match="empty pattern"):
        _core.pretokenize("", "abc")
    with pytest.raises(PatternError, match="empty pattern"):
        bytepair.train("abc abc", 257, pattern="")
    tok = bytepair.train("the cat sat " * 10, 260, pattern="gpt2")
    path = tmp_path / "t.json"
    tok.save(path)
    d = json.loads(path.read_text())
    d["pattern"] = ""
    path.write_text(json.dumps(d))
    with pytest.raises(FormatError, match=r"\$\.pattern.*empty pattern"):
        bytepair.load(path)


NON_COVERING = [r"(?:the)", r"[a-z]+", r"\p{Lu}\p{Ll}*", r"x*", r"\d{2}", r"(?i:[aeiou]+)", r"(?m)^\w+"]
TEXT = "the cat sat on the mat.\nThe Dog, 42 dogs & 7 cats!  안녕 😀\n"


@pytest.mark.parametrize("pattern", NON_COVERING)
def test_unmatched_text_is_its_own_chunk_in_core_and_reference(pattern):
    core = _core.pretokenize(pattern, TEXT)
    assert "".join(core) == TEXT
    assert all(core)
    assert R.pretokenize(TEXT, pattern) == core


def test_train_encode_count_keep_unmatched_text():
    text = "the cat sat on the mat"
    tok = bytepair.train(text * 3, 262, pattern="(?:the)")
    assert tok.decode(tok.encode(text)) == text  # the text between matches is kept, not dropped
    counts = ChunkCounts.from_texts([text], pattern="(?:the)")
    assert sum(len(c) * n for c, n in counts.items()) == len(text.encode())
    ref = R.count_chunks([text], "(?:the)")
    assert dict(counts.items()) == ref
    assert tok.count(text) == len(tok.encode(text))


PATTERNS = st.sampled_from(NON_COVERING + [r"\w+|\s+", r"[^\s]+", r"\p{L}+|\p{N}", r"(?s).{1,4}", r"'s|\p{Ll}+"])


@settings(max_examples=60, deadline=None)
@given(pattern=PATTERNS, text=st.text(max_size=60), extra=st.text(max_size=30))
def test_hypothesis_custom_patterns_round_trip(pattern, text, extra):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a capped vocabulary is fine here
        tok = bytepair.train(corpus("en_austen.txt")[:2000] + text, 300, pattern=pattern)
    for x in (text, extra, text + extra):
        assert tok.decode(tok.encode(x)) == x
        assert "".join(_core.pretokenize(pattern, x)) == x
        assert R.pretokenize(x, pattern) == _core.pretokenize(pattern, x)
