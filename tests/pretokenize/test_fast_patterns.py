"""The open models' patterns that run on a scanner (``_core.FAST_PATTERNS``:
Hugging Face ``ByteLevel``'s regex, Llama 3's, Qwen2's, Qwen3.5's, tekken's, ...)
cut every text exactly as a regex engine does.

DeepSeek V3's chain of three ``Split`` stages is one pass of its own scanner
(its pattern string is the three joined by ``\x1f``).

Three references:

* the core's own ``fancy-regex`` path on the same regex (the pattern wrapped in
  ``(?:...)``, a different string with the same meaning, is not recognised and
  runs through the regex engine; for the chain, the Rust unit tests run the
  stages on ``fancy-regex``);
* Hugging Face ``tokenizers`` (Oniguruma), the engine that runs these patterns
  for a ``tokenizer.json``: ``Split(pattern, "isolated")`` keeps every piece
  (a ``Sequence`` of them for the chain);
* the block path against the scalar scanner alone (``_pretokenize_spans_scalar``).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import _core
from conftest import optional

TIKTOKEN = {"gpt2", "cl100k", "o200k"}
OPEN = sorted(set(_core.FAST_PATTERNS) - TIKTOKEN)
FAMILY = {"bytelevel": "gpt2", "llama3": "llama3", "cl100k_hf": "llama3", "qwen2": "qwen2",
          "qwen35": "qwen35", "nemo": "nemo", "deepseek_v3": "deepseek_v3", "superword": "superword"}
CHAIN = "\x1f"

EDGE = [" ", " ", "\n", "\r", "\t", "'", "s", "S", "t", "L", "l", "v", "e", "r", "d", "m", "a", "Z", "0", "7",
        ".", ",", "!", "/", "$", "^", "\x00", "\u200b", "é", "É", "한", "中", "の", "カ", "\u309b", "\u30fb",
        "\u3040", "\u3099", "\u00a0", "\u3000", "\u2028", "\u0085", "\u017f",
        "\u0301", "\u0903", "\u20dd", "\u02b0", "\u01c5", "\u0663", "\u2167", "—", "😀", "’", "ـ", ":"]
WORDS = ["the", "The", " and", "HELLO", "'s", "'LL", "'ve", "don't", "123", "4567", "  ", "\n\n", " \n",
         "\n  ", ".\n", "...", ": ", "::", "e\u0301", ".\u0301", " \u0301x", "x" * 70, " " * 66, "7" * 66]


def regex_path(pattern: str) -> str:
    wrapped = f"(?:{pattern})"
    assert _core.pretokenizer_path(wrapped) == "regex"
    return wrapped


def onig_pieces(pattern: str, text: str) -> list:
    tokenizers = optional("tokenizers")
    pre = tokenizers.pre_tokenizers
    splits = [pre.Split(tokenizers.Regex(stage), behavior="isolated") for stage in pattern.split(CHAIN)]
    return [p for p, _ in pre.Sequence(splits).pre_tokenize_str(text)]


def assert_exact(name: str, text: str, *, onig: bool = True) -> None:
    pattern = _core.FAST_PATTERNS[name]
    ours = _core.pretokenize(pattern, text)
    assert "".join(ours) == text
    if CHAIN not in pattern:
        assert ours == _core.pretokenize(regex_path(pattern), text), f"{name}: scanner vs fancy-regex on {text!r}"
    if onig:
        assert ours == onig_pieces(pattern, text), f"{name}: scanner vs Oniguruma on {text!r}"
    assert _core.pretokenize_spans(pattern, text) == _core._pretokenize_spans_scalar(pattern, text), (
        f"{name}: block path vs scalar scanner on {text!r}")


def test_every_open_pattern_names_its_scanner():
    for name in OPEN:
        assert _core.pretokenizer_path(_core.FAST_PATTERNS[name]) == "scanner:" + FAMILY[name]
    for name in TIKTOKEN:
        assert _core.pretokenizer_path(name) == "scanner:" + name
    assert _core.pretokenizer_path(r"\w+") == "regex"
    with pytest.raises(ValueError, match="chain"):
        _core.pretokenizer_path("a\x1fb")
    assert _core.pretokenizer_path(None) == "whole"


def test_the_families_differ_where_their_patterns_do():
    llama3, qwen2, qwen35, nemo = (_core.FAST_PATTERNS[k] for k in ("llama3", "qwen2", "qwen35", "nemo"))
    assert _core.pretokenize(llama3, "x 12345") == ["x", " ", "123", "45"]
    assert _core.pretokenize(qwen2, "x 12345") == ["x", " ", "1", "2", "3", "4", "5"]
    assert _core.pretokenize(qwen2, "cafe\u0301!") == ["cafe", "\u0301!"]
    assert _core.pretokenize(qwen35, "cafe\u0301!") == ["cafe\u0301", "!"]
    assert _core.pretokenize(nemo, "don't") == ["don", "'t"]
    assert _core.pretokenize("o200k", "don't") == ["don't"]
    # A whitespace run at the end of the text: cl100k keeps it whole, Llama 3 cuts after the line break.
    assert _core.pretokenize("cl100k", "x\n  ") == ["x", "\n  "]
    assert _core.pretokenize(llama3, "x\n  ") == ["x", "\n", "  "]
    deepseek = _core.FAST_PATTERNS["deepseek_v3"]
    # Numbers and CJK runs are pieces of earlier stages: a space run before one ends its text, so `\s+(?!\S)` takes it all.
    assert _core.pretokenize(deepseek, "x  12345日本語abc") == ["x", "  ", "123", "45", "日本語", "abc"]
    assert onig_pieces(deepseek, "x  12345日本語abc") == ["x", "  ", "123", "45", "日本語", "abc"]


@pytest.mark.parametrize("name", OPEN)
def test_corpora_match_the_regex_engines(name, corpora):
    for text in corpora.values():
        assert_exact(name, text[:60_000])


@pytest.mark.parametrize("name", OPEN)
def test_random_edge_texts(name):
    rng = random.Random(0xFA57)
    for _ in range(300):
        pool = [rng.choice(EDGE + WORDS) for _ in range(rng.randint(1, 8))]
        text = "".join(rng.choice(pool) for _ in range(rng.choice([3, 20, 70, 140, 300])))
        assert_exact(name, text)


@pytest.mark.parametrize("name", OPEN)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(EDGE + WORDS), max_size=40).map("".join) | st.text(max_size=60))
def test_hypothesis_texts(name, text):
    assert_exact(name, text)
