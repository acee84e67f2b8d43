"""Encoding with a superword tokenizer: its long spans merge in two stages
(the ranks below the first token bridging words, then the whole vocabulary;
``src/encode/staged.rs``). The ids must be the reference's and those of the
one-stage heap path, for trained tokenizers on generated and real text
(runs of spaces, newlines, digits) and for vocabularies whose tokens bridging
spaces sit at any rank; and the time must grow linearly on long hostile
spans."""

from __future__ import annotations

import random
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core, patterns
from bytepair import reference as R
from conftest import CORPORA, HYPOTHESIS_SCALE, corpus

TRAIN = "\n\n".join(corpus(name)[:20_000] for name in ("en_austen.txt", "en_kjv.txt", "en_pydocs.txt"))


def _train(vocab_size: int, transition: int) -> bytepair.Tokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small text may run out of pairs
        return bytepair.train(TRAIN, vocab_size, superword=transition)


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    t = _train(256 + 1500, 256 + 1000)
    assert any(len(b.split()) >= 2 for b in t.token_bytes_list), "no superword token: the test would not test"
    return t


def _check(tok: bytepair.Tokenizer, text: str) -> None:
    """Ids equal to the reference's, and each long span's equal to the heap path's."""
    ranks = {t: i for i, t in enumerate(tok.token_bytes_list) if t}
    assert tok.encode_ordinary(text) == R.encode(text, ranks, R.SPAN_PATTERN)
    for span in set(_core.pretokenize(patterns.SUPERWORD, text)):
        b = span.encode("utf-8", "surrogatepass")
        if len(b) > 16 and b not in ranks:
            assert tok._core.encode_piece_with(b, "auto") == tok._core.encode_piece_with(b, "heap")


WORDS = ["the", "of", "and", "to", "a", "in", "is", "1", "42", "2024", "x:", ":", ",", ".", "\n", "\n\n",
         " ", "  ", "\t", "cat", "return", "def", "é", "토큰", "()", "self.x"]


@settings(max_examples=80 * HYPOTHESIS_SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                                  HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=80), st.sampled_from([" ", "  ", "", "   "]))
def test_trained_tokenizer_equals_the_reference_on_generated_text(tok, words, sep):
    _check(tok, sep.join(words))


@pytest.mark.parametrize("name", CORPORA)
def test_trained_tokenizer_equals_the_reference_on_real_text(tok, name):
    text = corpus(name)[20_000:40_000]
    assert sum(len(s.encode()) > 16 for s in _core.pretokenize(patterns.SUPERWORD, text)) > 100
    _check(tok, text)


@settings(max_examples=60 * HYPOTHESIS_SCALE, deadline=None)
@given(st.data())
def test_bridging_tokens_at_any_rank(data):
    """Random vocabularies over a few letters, the space, digits and the
    newline, tokens made of two earlier ones in a random rank order: the
    first token bridging a space lands anywhere (early, late, or nowhere),
    and the split rank derived from it is exact whatever it is."""
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    alphabet = [b"a", b"b", b" ", b"1", b"\n"]
    toks: list = list(alphabet)
    while len(toks) < 60:
        t = rng.choice(toks) + rng.choice(toks)
        if len(t) <= 8 and t not in toks:
            toks.append(t)
    extra = toks[len(alphabet):]
    rng.shuffle(extra)
    single = [bytes([i]) for i in range(256)]
    tok = bytepair.Tokenizer(single + extra, "superword")
    text = "".join(rng.choice(["a", "b", " ", "  ", "1", "\n", "ab ", "b a"]) for _ in range(rng.randrange(1, 200)))
    _check(tok, text)


@pytest.mark.parametrize("case", ["minified", "one_word", "spaces", "digits_and_words"])
def test_long_spans_take_linear_time(tok, case):
    """One span of 128 KiB and of 1 MiB (no newline): CPU time within 4x
    of linear (8x the bytes, at most 32x the time; quadratic gives 64x)."""
    rng = random.Random(3)
    code = corpus("code_python.txt").replace("\n", " ")

    def text(n: int) -> str:
        if case == "minified":
            return (code * (n // len(code) + 1))[:n]
        if case == "one_word":
            return ("the " * n)[:n]
        if case == "spaces":
            return " " * (n - 1) + "x"
        return "".join(rng.choice(["of the", " 123", " 4567", " and"]) for _ in range(n // 4))[:n]

    def cpu(s: str) -> float:
        best = float("inf")
        for _ in range(2):
            _core.clear_piece_cache()
            t0 = time.process_time()
            ids = tok.encode_ordinary(s)
            best = min(best, time.process_time() - t0)
        assert tok.decode_bytes(ids) == s.encode()
        return best

    small, big = text(128 * 1024), text(1024 * 1024)
    assert cpu(big) < 32 * max(cpu(small), 1e-3)
