"""The block pre-tokenizer (src/pretok/block.rs: the named patterns' ASCII piece
starts from 64-byte class masks, where the CPU has AVX2) cuts every text exactly as the scalar
scanner alone (``_core._pretokenize_spans_scalar``) and as the regex
(``bytepair.reference``).

The other tests of this folder mostly use short texts; the block path only runs on
texts longer than one block (64 bytes), so these are longer: the real corpora,
random texts over an alphabet heavy in the edge cases (lengths around multiples
of 64), and the hostile inputs.
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bytepair import _core, reference
from hostile_inputs import CASES as HOSTILE

NAMES = ["gpt2", "cl100k", "o200k"]

EDGE = [" ", " ", " ", "\n", "\n", "\r", "\t", "\x0b", "\x0c", "'", "'", "s", "S", "t", "T", "l", "L", "v", "e",
        "r", "R", "d", "m", "M", "a", "Z", "0", "1", "9", ".", ",", "!", "(", "-", "/", "\x00", "\x7f", "é", "한",
        "\u00a0", "\u3000", "\u2028", "\u0085", "\u017f", "\u212a", "\u0301", "\u0663", "—", "😀", "’"]
WORDS = ["the", "The", " and", "Hello", " world", "'s", "'LL", "'ve", "'ſ", "don't", "123", "4567", "1948",
         "  ", "   ", "\n", "\r\n", "\n\n", " \n", "\n    ", "\t\t", ".\n", ":\n", "...", "!?", "),", " (", '"',
         "x" * 70, " " * 70, "\n" * 65, "7" * 66]


def assert_block_is_scalar(name: str, text: str) -> None:
    got = _core.pretokenize_spans(name, text)
    want = _core._pretokenize_spans_scalar(name, text)
    if got != want:
        at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        lo = want[max(at - 3, 0)][0] if want else 0
        data = text.encode()
        raise AssertionError(f"{name}: block path differs from the scalar scanner at piece {at}: "
                             f"{got[at:at + 3]} vs {want[at:at + 3]}, near {data[lo:lo + 80]!r}")


def random_text(rng: random.Random) -> str:
    pool = [rng.choice(EDGE + WORDS) for _ in range(rng.randint(1, 8))]
    out = ""
    if rng.random() < 0.3:
        out = "word " * rng.randint(0, 20) + "x" * rng.randint(0, 63)
    target = rng.choice([63, 64, 65, 127, 128, 129, 191, 192, 193, 300, 1000])
    while len(out.encode()) < target:
        out += rng.choice(pool)
    return out


@pytest.mark.parametrize("name", NAMES)
def test_random_edge_texts_block_scalar_and_regex(name):
    rng = random.Random(0xB10C)
    for i in range(3000):
        text = random_text(rng)
        assert_block_is_scalar(name, text)
        if i % 10 == 0:
            assert _core.pretokenize(name, text) == reference.pretokenize(text, name), text


long_text = st.lists(st.sampled_from(EDGE + WORDS), min_size=30, max_size=200).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=long_text)
def test_hypothesis_long_texts(name, text):
    assert_block_is_scalar(name, text)
    assert _core.pretokenize(name, text) == reference.pretokenize(text, name)


@pytest.mark.parametrize("name", NAMES)
def test_fixtures_every_block_offset(name, corpora):
    for fname, text in corpora.items():
        for skip in (0, 1, 2, 3, 33, 63):
            assert_block_is_scalar(name, text[skip:])
        assert _core.pretokenize(name, text[5:]) == reference.pretokenize(text[5:], name), fname


def data_corpora() -> list[Path]:
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    return sorted(root.glob("*.txt")) if root.is_dir() else []


@pytest.mark.parametrize("name", NAMES)
def test_real_corpora(name):
    files = data_corpora()
    if not files:
        pytest.skip("no corpora in $BYTEPAIR_DATA/corpora")
    for path in files:
        text = path.read_text(encoding="utf-8")
        # the first 2 MB, and 2 MB from the middle at an odd offset (memory: the
        # span lists of a whole corpus would take gigabytes)
        for start in (0, len(text) // 2 + 7):
            assert_block_is_scalar(name, text[start:start + 2_000_000])


N = 1_000_000


@pytest.mark.parametrize("name", NAMES)
def test_hostile_inputs(name):
    for text in [" " * N + "x", " " * N, "x" * N, "\n" * N, "7" * N, "\u0301" * N, "한" * N, "ʰ" + "A" * N,
                 " \n" * N + "x", "\n " * N + "x", ".\n" * N, "'" * N, "'s" * N, "a'" * N,
                 " " * N + "\n" + " " * N, ("x" * 63 + "é") * (N // 64)]:
        assert_block_is_scalar(name, text)
    for text in [" " * 5000 + "x", "\n \n" * 2000 + "x", "'s" * 3000, "1" * 5000 + " ", ".\n" * 3000 + " x"]:
        assert _core.pretokenize(name, text) == reference.pretokenize(text, name)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_shared_hostile_inputs(name, case):
    text = eval(HOSTILE[case], {"n": 300_000, "random": random, "base64": base64})
    assert_block_is_scalar(name, text)


def test_scalar_binding_refuses_custom_patterns():
    with pytest.raises(ValueError, match="not a pattern with a scanner"):
        _core._pretokenize_spans_scalar(r"\w+", "ab")
