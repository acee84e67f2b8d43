"""The Unicode normalizers of a ``tokenizer.json`` (``NFC``, ``NFD``, ``NFKC``,
``NFKD``) against Hugging Face ``tokenizers``, which normalizes each text as a
whole with the same Unicode 9.0 tables. bytepair normalizes only the stretches
around characters that fail the quick check; this checks that the result is
the whole text's normalization, on real text (as is and decomposed, so that
composition has work to do) and on generated text heavy in combining marks,
Hangul jamo and characters with decompositions.

The tokenizer is byte-level with no merges, so its ids are the bytes of the
normalized text: ``decode(encode(text))`` is bytepair's normalized text.
"""

from __future__ import annotations

import functools
import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from conftest import CORPORA, HYPOTHESIS_SCALE, corpus, optional

tokenizers = optional("tokenizers")

FORMS = ["NFC", "NFD", "NFKC", "NFKD"]


def _byte_chars() -> list:
    """GPT-2's byte-to-character table (``ByteLevel``'s alphabet), by byte."""
    kept = [*range(33, 127), *range(161, 173), *range(174, 256)]
    table, extra = {b: chr(b) for b in kept}, 0
    for b in range(256):
        if b not in table:
            table[b], extra = chr(256 + extra), extra + 1
    return [table[b] for b in range(256)]


@functools.cache
def _pair(form: str, tmp: str):
    """(bytepair's tokenizer, tokenizers' normalizer) for ``form``."""
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": {"type": form},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": {c: i for i, c in enumerate(_byte_chars())},
                  "merges": []},
    }
    path = f"{tmp}/{form}.json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return bytepair.load(path), getattr(tokenizers.normalizers, form)(), tokenizers.Tokenizer.from_file(path)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("forms"))


def _check(form: str, tmp: str, text: str) -> None:
    ours, normalizer, hf = _pair(form, tmp)
    want = normalizer.normalize_str(text)
    ids = ours.encode(text)
    assert ours.decode(ids) == want, (form, text[:80])
    assert ids == hf.encode(text, add_special_tokens=False).ids, (form, text[:80])


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", CORPORA)
def test_real_text_as_is_and_decomposed(form, name, tmp):
    text = corpus(name)
    for doc in text.split("\n\n")[:40] + [text]:
        _check(form, tmp, doc)
        _check(form, tmp, unicodedata.normalize("NFD", doc))


#: Ranges of characters that interact under normalization: combining marks of
#: many classes, Indic and Tibetan vowel signs (some compose, some decompose to
#: non-starters), Hangul jamo L/V/T and syllables, Latin and Greek letters with
#: decompositions, compatibility characters, kana with voicing marks, and astral
#: compositions (Kaithi, musical symbols, CJK compatibility ideographs).
INTERESTING = [
    (0x41, 0x45), (0x61, 0x65), (0x20, 0x20), (0xA0, 0xA0), (0xC0, 0xD6), (0x300, 0x34F),
    (0x591, 0x5C7), (0x64B, 0x655), (0x915, 0x94D), (0x958, 0x95F), (0x9BE, 0x9D7),
    (0xB3E, 0xB57), (0xBBE, 0xBD7), (0xF71, 0xF84), (0x1100, 0x1114), (0x1161, 0x1177),
    (0x11A7, 0x11C3), (0xAC00, 0xAC1D), (0x1E00, 0x1E0F), (0x1F00, 0x1F0F), (0x1FBE, 0x1FC1),
    (0x2126, 0x212B), (0x2460, 0x2463), (0x304B, 0x304C), (0x3099, 0x309C), (0x3300, 0x3302),
    (0xF900, 0xF902), (0xFB01, 0xFB02), (0xFF21, 0xFF23), (0x11099, 0x1109A), (0x110BA, 0x110BA),
    (0x1D15E, 0x1D165), (0x1D16D, 0x1D16F), (0x2F800, 0x2F801),
]
MARKED = st.text(
    st.one_of(*(st.integers(a, b).map(chr) for a, b in INTERESTING), st.characters(codec="utf-8")),
    max_size=40,
)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=300 * HYPOTHESIS_SCALE)
@given(text=MARKED)
def test_generated_marks_jamo_and_decompositions(form, tmp, text):
    _check(form, tmp, text)

