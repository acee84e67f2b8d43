"""bytepair.inspect.diff on hand-built vocabularies where the answer is known,
and on the bundled encodings with real text."""

from __future__ import annotations

import itertools
import random

import pytest

from bytepair import Tokenizer, get_encoding
from bytepair.inspect import diff as inspect_diff
from bytepair.inspect.diff import _longest_common_order, _segments, diff
from conftest import corpus

BYTES = [bytes([i]) for i in range(256)]


def tok(extra, name, pattern=None):
    return Tokenizer(BYTES + extra, pattern=pattern, name=name)


def test_inspect_exports_diff():
    assert inspect_diff is diff


def test_identical():
    t = get_encoding("gpt2")
    d = diff(t, get_encoding("gpt2"), ["hello world", "토큰"])
    assert d.same_vocab and not d.moved and d.pair_changed == []
    assert all(doc.same for doc in d.documents)
    assert d.a != d.b  # the two sides keep distinct labels


def test_hand_built_known_answer():
    a = tok([b"ab", b"cd", b"ef", b"abc"], "a")
    b = tok([b"cd", b"bc", b"ab", b"ef", b"abc"], "b", pattern="gpt2")
    d = diff(a, b)
    assert d.only_a == [] and d.only_b == [(b"bc", 257)]
    assert d.id_changed == [(b"ab", 256, 258), (b"cd", 257, 256), (b"ef", 258, 259), (b"abc", 259, 260)]
    assert len(d.moved) == 1 and d.moved[0][0] in (b"ab", b"cd")  # one swap: one token moved
    assert d.pair_changed == [(b"abc", (b"ab", b"c"), (b"a", b"bc"))]
    assert d.pattern_a is None and d.pattern_b is not None
    text = d.to_text()
    assert "only in b" in text and "'bc'" in text and "'ab' + 'c' -> 'a' + 'bc'" in text


def test_moved_is_minimal():
    for n in range(1, 7):
        for perm in itertools.permutations(range(n)):
            keep = _longest_common_order(list(perm))
            kept = [perm[i] for i in sorted(keep)]
            assert kept == sorted(kept)
            best = max(len(s) for r in range(n + 1) for s in itertools.combinations(perm, r) if list(s) == sorted(s))
            assert len(keep) == best


def test_segments_cover_the_same_bytes():
    rng = random.Random(3)
    for _ in range(300):
        text = bytes(rng.choice(b"ab ") for _ in range(rng.randint(0, 20)))

        def cut(s):
            out, i = [], 0
            while i < len(s):
                k = rng.randint(1, 3)
                out.append(s[i:i + k])
                i += k
            return out

        a, b = cut(text), cut(text)
        segs = _segments(a, b)
        assert (not segs) == (a == b)
        for g in segs:
            assert b"".join(g.a) == b"".join(g.b) == text[g.start:g.start + len(b"".join(g.a))]
            assert g.a != g.b


def test_documents_on_real_text():
    docs = [p for p in corpus("ko_prose.txt").split("\n\n") if p.strip()][:20]
    docs += [p for p in corpus("en_austen.txt").split("\n\n") if p.strip()][:20]
    a, b = get_encoding("cl100k_base"), get_encoding("o200k_base")
    d = diff(a, b, docs)
    assert [x.tokens_a for x in d.documents] == [len(a.encode_ordinary(t)) for t in docs]
    assert [x.tokens_b for x in d.documents] == [len(b.encode_ordinary(t)) for t in docs]
    assert d.differing_documents
    for x in d.differing_documents:
        raw = docs[x.index].encode()
        for g in x.segments:
            assert b"".join(g.a) == b"".join(g.b) == raw[g.start:g.start + len(b"".join(g.a))]
    assert len(d.only_a) + d.shared == len(a.token_bytes_list) == d.n_a
    assert len(d.only_b) + d.shared == len(b.token_bytes_list) == d.n_b
    out = d.to_text()
    assert "documents cut differently" in out and "first cut differently at byte" in out
    js = d.to_dict()
    assert js["documents"][0]["tokens_a"] == d.documents[0].tokens_a


def test_bad_input():
    with pytest.raises(TypeError, match="byte-level Tokenizers"):
        diff(get_encoding("gpt2"), object())
    with pytest.raises(ValueError, match="unknown encoding"):
        diff("gpt2", "nope")
