"""Every storage kind of a Python ``str`` reaches the encoder as the same
UTF-8: ASCII, Latin-1, UCS-2 and UCS-4 strings, fresh (converted by bytepair's
own loops) or with CPython's UTF-8 form already kept (borrowed), give
tiktoken's ids; lone surrogates still take tiktoken's path."""

from __future__ import annotations

import pytest

import bytepair
from conftest import corpus, tiktoken_encoding


def fresh(s: str) -> str:
    """An equal ``str`` object made anew: CPython has not kept its UTF-8 form."""
    return (s + "!")[:-1]


def kinds() -> dict:
    """Real texts of each storage kind (the widest character decides it)."""
    ko = corpus("ko_prose.txt")[:20_000]
    multi = corpus("multi_unicode.txt")[:20_000]
    # the excerpt has no character past U+FFFF: emoji and a rare CJK one between its lines
    lines = multi.split("\n")
    multi = "\n".join(line + (" 😀🎉" if i % 7 == 0 else " 𠀀" if i % 11 == 0 else "") for i, line in enumerate(lines))
    out = {
        "ascii": corpus("en_kjv.txt")[:20_000],
        "latin1": corpus("en_austen.txt")[:20_000] + " café naïve façade ½ ×",
        "ucs2": ko,
        "ucs4": multi,
        # short strings stay under one 16-character vector block
        "ucs2 short": "한국어 é",
        "ucs4 short": "a😀b",
    }
    widest = {"ascii": 0x7F, "latin1": 0xFF, "ucs2": 0xFFFF, "ucs4": 0x10FFFF}
    for name, text in out.items():
        top = max(map(ord, text))
        kind = name.split()[0]
        assert top <= widest[kind] and (kind == "ascii" or top > {"latin1": 0x7F, "ucs2": 0xFF, "ucs4": 0xFFFF}[kind])
    return out


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_every_str_kind_fresh_or_kept_gives_tiktokens_ids(name):
    enc = bytepair.get_encoding(name)
    ref = tiktoken_encoding(name)
    for kind, text in kinds().items():
        s = fresh(text)
        got = enc.encode_ordinary(s)  # bytepair converts it
        want = ref.encode_ordinary(s)  # CPython keeps the UTF-8 form from here on
        assert got == want, kind
        assert enc.encode_ordinary(s) == want, kind  # borrowed
        assert enc.encode_to_numpy(fresh(text)).tolist() == want, kind
        assert enc.count(fresh(text)) == len(want), kind
        assert enc.decode(got) == text, kind
    texts = [fresh(t) for t in kinds().values()]
    assert enc.encode_batch(texts) == [ref.encode_ordinary(t) for t in kinds().values()]
    ids, offsets = enc.encode_batch_to_numpy([fresh(t) for t in texts])
    flat = [ids[offsets[i] : offsets[i + 1]].tolist() for i in range(len(texts))]
    assert flat == enc.encode_batch(texts)


@pytest.mark.parametrize("where", [0, 5, 15, 16, 17, 40, -1])
def test_lone_surrogates_in_wide_strings_follow_tiktoken(where):
    enc = bytepair.get_encoding("cl100k_base")
    ref = tiktoken_encoding("cl100k_base")
    for base in ["한국어 텍스트와 English words, 日本語も少し" * 3, "emoji 😀 and 한국어 " * 4]:
        for s in ["\ud800", "\udfff"]:
            i = where if where >= 0 else len(base)
            text = fresh(base[:i] + s + base[i:])
            assert enc.encode(text) == ref.encode(text)
            assert enc.encode_ordinary(fresh(text)) == ref.encode_ordinary(text)
