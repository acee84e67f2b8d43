"""What ``bytepair.shrink`` preserves: every piece whose base encoding uses only
kept tokens encodes to the same tokens mapped through ``id_map``; the naive cut
(drop the unused tokens, keep the ranks) does not. Round trips on every corpus,
the hostile inputs and hypothesis text."""

from __future__ import annotations

import base64
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core
from bytepair.shrinking import merge_parents, shrink
from conftest import CORPORA, HYPOTHESIS_SCALE, corpus
from hostile_inputs import CASES


@pytest.fixture(scope="module")
def o200k():
    return bytepair.get_encoding("o200k_base")


@pytest.fixture(scope="module")
def shrunk(o200k):
    """o200k_base shrunk on the Korean and English excerpts to 3,000 tokens."""
    return shrink(o200k, [corpus("ko_prose.txt"), corpus("en_austen.txt")], keep=3000)


def _pieces(tok, texts):
    return [p for t in texts for p in _core.pretokenize(tok.pattern, t)]


def _check_pieces(base, small, id_map, texts, kept_ids=None):
    """(pieces checked, pieces whose base tokens are all kept, of those the ones
    that differ). ``kept_ids``: the kept ids when ``small`` keeps the base's ids
    (``id_map`` None)."""
    pieces = _pieces(base, texts)
    kept = np.zeros(base.n_vocab, dtype=bool)
    kept[id_map if kept_ids is None else kept_ids] = True
    if id_map is None:
        id_map = np.arange(base.n_vocab)
    old = base.encode_batch(pieces, disallowed_special=())
    new = small.encode_batch(pieces, disallowed_special=())
    covered = differ = 0
    for o, n in zip(old, new):
        if kept[o].all():
            covered += 1
            differ += id_map[n].tolist() != o
    return len(pieces), covered, differ


@pytest.mark.parametrize("name", CORPORA)
def test_pieces_of_kept_tokens_encode_the_same(o200k, shrunk, name):
    small, id_map = shrunk
    n, covered, differ = _check_pieces(o200k, small, id_map, [corpus(name)])
    assert differ == 0
    # not vacuous: many pieces are covered, and (except on the sample's own
    # scripts) some are not, so the shrink did drop tokens these texts use
    assert covered > n // 10


def test_whole_texts_of_kept_tokens_encode_the_same(o200k, shrunk):
    small, id_map = shrunk
    kept = np.zeros(o200k.n_vocab, dtype=bool)
    kept[id_map] = True
    docs = [d for name in CORPORA for d in corpus(name).split("\n\n")]
    old = o200k.encode_batch(docs, disallowed_special=())
    same = [d for d, o in zip(docs, old) if kept[o].all()]
    assert len(same) > 50
    for d in same:
        assert id_map[small.encode(d, disallowed_special=())].tolist() == o200k.encode(d, disallowed_special=())


@pytest.mark.parametrize("encoding", ["gpt2", "cl100k_base"])
def test_other_encodings(encoding):
    # gpt2 and cl100k_base keep their single bytes at ranks other than 0..255
    base = bytepair.get_encoding(encoding)
    small, id_map = shrink(base, corpus("en_pydocs.txt"), keep=2000)
    assert small.n_vocab == 2000
    n, covered, differ = _check_pieces(base, small, id_map, [corpus("code_python.txt"), corpus("en_kjv.txt")])
    assert differ == 0 and covered > n // 4
    text = corpus("multi_unicode.txt")
    assert small.decode(small.encode(text, disallowed_special=())) == text


def test_the_naive_cut_changes_encodings_shrink_does_not(o200k):
    # o200k_base encodes "strawberry" as st|raw|berry. Keeping just those three
    # (and the bytes) at their old ranks loses the tokens "berry" is merged
    # from, so the naive vocabulary can no longer build it.
    text = "strawberry"
    ids = o200k.encode(text)
    naive = bytepair.Tokenizer({t: r for t, r in o200k.mergeable_ranks.items() if len(t) == 1 or r in ids}, "o200k")
    assert naive.encode(text) != ids
    assert naive.decode(naive.encode(text)) == text  # still lossless, just different
    small, id_map = shrink(o200k, text, keep=400)
    assert id_map[small.encode(text)].tolist() == ids


def test_the_naive_cut_on_a_corpus(o200k):
    sample, other = corpus("en_austen.txt"), corpus("en_kjv.txt")
    use = np.zeros(o200k.n_vocab, dtype=np.int64)
    np.add.at(use, o200k.encode_ordinary(sample), 1)
    kept_naive = np.flatnonzero((use > 0) | (np.arange(o200k.n_vocab) < 256))
    # the kept tokens in rank order, numbered densely: the same merge order as their old ranks
    tokens = o200k.token_bytes_list
    naive = bytepair.Tokenizer({tokens[old]: new for new, old in enumerate(kept_naive.tolist())}, "o200k")
    _, covered, differ = _check_pieces(o200k, naive, kept_naive, [other])
    assert differ > 0, "the naive cut should change some pieces made of kept tokens"
    small, id_map = shrink(o200k, counts=use, keep=len(kept_naive) + 2 + 3000, strategy="count")
    _, covered2, differ2 = _check_pieces(o200k, small, id_map, [other])
    assert differ2 == 0 and covered2 >= covered


def test_kept_set_is_closed_under_merges(o200k, shrunk):
    small, id_map = shrunk
    parents = merge_parents(o200k)
    kept = set(id_map.tolist())
    for old in id_map.tolist():
        for p in parents[old].tolist():
            assert p == -1 or p in kept
    # the small tokenizer's own merges are the base's, renumbered
    new_of = {old: new for new, old in enumerate(id_map.tolist())}
    multi = [i for i in range(small.n_vocab - 2) if len(small.decode_single_token_bytes(i)) > 1]
    for (a, b), i in zip(small.merges, multi):
        assert [new_of[int(x)] for x in parents[id_map[i]]] == [a, b]


@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_inputs_round_trip(shrunk, case):
    small, _ = shrunk
    text = eval(CASES[case], {"n": 100_000, "random": random, "base64": base64})
    assert small.decode(small.encode(text)) == text


@pytest.mark.parametrize("name", CORPORA)
def test_corpora_round_trip(shrunk, name):
    small, _ = shrunk
    text = corpus(name)
    assert small.decode(small.encode(text, disallowed_special=())) == text


@settings(max_examples=200 * HYPOTHESIS_SCALE, deadline=None)
@given(st.text())
def test_round_trip_any_text(text):
    small, _ = _tiny()
    assert small.decode(small.encode(text, disallowed_special=())) == bytepair.tokenizer.fix_surrogates(text)


@settings(max_examples=100 * HYPOTHESIS_SCALE, deadline=None)
@given(st.lists(st.sampled_from(["<|endoftext|>", "a", " the", "한국", "\n", "  ", "1234", "😀"]), max_size=12))
def test_round_trip_with_specials(parts):
    small, _ = _tiny()
    text = "".join(parts)
    ids = small.encode(text, allowed_special="all")
    assert small.decode(ids) == text
    assert ids.count(small.eot_token) == parts.count("<|endoftext|>")


_TINY: list = []


def _tiny():
    """o200k_base shrunk hard (600 tokens) on the Korean excerpt, built once."""
    if not _TINY:
        _TINY.append(shrink(bytepair.get_encoding("o200k_base"), corpus("ko_prose.txt"), keep=600))
    return _TINY[0]


@settings(max_examples=200 * HYPOTHESIS_SCALE, deadline=None)
@given(st.lists(st.sampled_from(["헌법", "의", " 대한", "민국", " the", "ing", " string", "def", "(", "):", " ",
                                 "\n", "  ", "123", "4", "é", "x", "y", "😀", "tokenizer"]), max_size=30),
       st.text(max_size=10))
def test_pieces_of_kept_tokens_encode_the_same_any_text(o200k, shrunk, parts, noise):
    small, id_map = shrunk
    text = bytepair.tokenizer.fix_surrogates("".join(parts) + noise)
    _, _, differ = _check_pieces(o200k, small, id_map, [text])
    assert differ == 0
