"""Chains of ``Split`` and ``Digits`` pre-tokenizers (DeepSeek LLM 7B's and
DeepSeek Coder 33B's) run by one scanner (``scanner:split_chain``) cut every
text exactly as the stages run one by one on ``fancy-regex`` do, and in time
linear in the text.

The stages are read by ``bytepair.formats.hf_pipeline`` from the
``pre_tokenizer`` objects of the two files, written out here, so the tests need
no model file. References: the same stages unfused (``Split: regex``, each
stage re-splitting every piece), and on the corpora Hugging Face
``tokenizers``' own pre-tokenizer (Oniguruma).
"""

from __future__ import annotations

import random
import time
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import _core
from bytepair.formats import hf_pipeline
from conftest import optional

LLM_LETTERS = (
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af"
    "\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5"
    "\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba"
    "\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45"
    "\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
    "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc"
    "\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3"
    "\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06"
    "\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3"
    "\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df"
    "\U0001e900-\U0001e943]+"
)
LLM_PUNCT = "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+"
CJK_KO = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"


def _split(regex: str) -> Dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}


def _pre(*splits: str) -> Dict[str, Any]:
    return {"type": "Sequence", "pretokenizers": [
        *map(_split, splits), {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


PRE = {
    "deepseek-llm-7b": _pre("[\r\n]", LLM_LETTERS, LLM_PUNCT, "\\s+$", CJK_KO),
    "deepseek-coder-33b": _pre("[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", CJK_KO),
}
MODELS = sorted(PRE)
STAGES = {m: hf_pipeline._stages({"pre_tokenizer": PRE[m]}, None) for m in MODELS}

EDGE = ["a", "Z", "x", "0", "7", "1", " ", "  ", "\t", "\n", "\r\n", "\n\n", ".", ",", "!", "(", ":", "_", "~",
        "'", "\u00e9", "e\u0301", "\u0301", "\u0903", "\u00b5", "\u03a9", "\u044f", "\u01c5", "\u02b0",
        "\ud55c", "\u1100", "\u4e2d", "\u4e00", "\u9fa5", "\u9fa6", "\u306e", "\u30ab", "\u0800", "\u0e01",
        "\u0905", "\u00a0", "\u3000", "\u3001", "\u2028", "\u0085", "\u200b", "\u2019", "\u201c", "\u2014",
        "\uff01", "\uff21", "\uff11", "\u0663", "\u216b", "\u00bd", "\U0001f600", "\U00010400", "\ue000"]
WORDS = ["the", " The", " and", "caf\u00e9", "na\u0308ive", "\u0391\u03b8\u03ae\u03bd\u03b1", " \u041c\u043e\u0441\u043a\u0432\u0430",
         "\ud55c\uad6d\uc5b4", "\u65e5\u672c\u8a9e", "123", "1948\ub144", "3.14", "  ", " \n", "\n  ", ".\n",
         "...", ": ", "x" * 70, " " * 66, "7" * 20, "\u3000\u3000", "def f(x):\n    return x"]


def pieces(model: str, text: str, fused: bool) -> List[str]:
    return _core._pretokenize_stages(STAGES[model], text, fused)[0]


def assert_exact(model: str, text: str) -> None:
    ours = pieces(model, text, True)
    assert "".join(ours) == text
    assert ours == pieces(model, text, False), f"{model}: chain scanner vs the stages on {text!r}"


@pytest.mark.parametrize("model", MODELS)
def test_the_chain_takes_one_scanner_and_says_so(model):
    n = len(PRE[model]["pretokenizers"]) - 2
    paths = _core._pretokenize_stages(STAGES[model], "x", True)[1]
    assert paths == [f"Split x{n} + Digits x1: scanner:split_chain", "ByteLevel"]
    unfused = _core._pretokenize_stages(STAGES[model], "x", False)[1]
    assert unfused == ["Split: regex"] * n + ["Digits", "ByteLevel"]


def test_a_stage_of_another_shape_leaves_the_chain_to_the_stages():
    stages = hf_pipeline._stages({"pre_tokenizer": _pre("[\r\n]", "\\s+(?!\\S)")}, None)
    paths = _core._pretokenize_stages(stages, "a  b", True)[1]
    # the first Split's shape fits, the second's look-ahead does not: the chain
    # starts after it (Digits alone is no chain)
    assert paths == ["Split: regex", "Split: regex", "Digits", "ByteLevel"]


def test_examples():
    # "=" is a symbol, not punctuation: " =" stays a gap of the letters' split
    assert pieces("deepseek-coder-33b", "x = f(12)\n\ud55c\uad6d\uc5b4  ", True) == [
        "x", " =", " f", "(", "1", "2", ")", "\n", "\ud55c\uad6d\uc5b4", "  "]
    # Omega is a letter of DeepSeek LLM's class, ASCII letters are in its
    # punctuation class too, a piece's trailing spaces are a piece
    assert pieces("deepseek-llm-7b", " \u03a9mega, x  \n", True) == [
        " \u03a9", "mega", ",", " x", "  ", "\n"]


@pytest.mark.parametrize("model", MODELS)
def test_corpora_match_the_stages_and_tokenizers(model, corpora):
    pre = optional("tokenizers").pre_tokenizers
    onig = pre.Sequence([
        pre.Split(optional("tokenizers").Regex(s["pattern"]["Regex"]), behavior="isolated")
        if s["type"] == "Split" else pre.Digits(individual_digits=True)
        for s in PRE[model]["pretokenizers"] if s["type"] != "ByteLevel"])
    for name, text in corpora.items():
        text = text[:60_000]
        assert_exact(model, text)
        for doc in text.split("\n\n")[:200]:
            want = [p for p, _ in onig.pre_tokenize_str(doc)]
            assert pieces(model, doc, True) == want, f"{model} on {name}: {doc[:80]!r}"


@pytest.mark.parametrize("model", MODELS)
def test_random_edge_texts(model):
    rng = random.Random(0xC4A1)
    for _ in range(300):
        pool = [rng.choice(EDGE + WORDS) for _ in range(rng.randint(1, 8))]
        assert_exact(model, "".join(rng.choice(pool) for _ in range(rng.choice([3, 20, 70, 200]))))


@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from(EDGE + WORDS), max_size=40).map("".join) | st.text(max_size=60))
def test_hypothesis_texts(model, text):
    assert_exact(model, text)


# Linear time: each case timed at N and 8N characters (CPU time, best of
# three); linear gives a ratio of ~8, quadratic ~64; 32 leaves room for noise.
N = 100_000
HOSTILE = {
    "spaces_then_x": lambda n: " " * (n - 1) + "x",
    "spaces": lambda n: " " * n,
    "space_ideographic": lambda n: " \u3000" * (n // 2) + ".",
    "newlines_spaces": lambda n: " \n" * (n // 2) + "x",
    "letters": lambda n: "x" * n,
    "digits": lambda n: "7" * n,
    "marks": lambda n: "a" + "\u0301" * n,
    "space_punct": lambda n: " ." * (n // 2),
    "cjk": lambda n: "\u4e2d" * n,
}


def _cpu(stages: Any, text: str) -> float:
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        _core._pretokenize_stages(stages, text, True)
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_linear_time_on_hostile_input(model, case):
    make = HOSTILE[case]
    small, big = _cpu(STAGES[model], make(N)), _cpu(STAGES[model], make(8 * N))
    assert big < 32 * max(small, 1e-4), f"{case}: {small:.4f}s at {N}, {big:.4f}s at {8 * N}"
