"""``bytepair.shrink`` and ``token_use``: arguments, data kinds, budgets, the id
map, the strategies, and the errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import bytepair
from bytepair.errors import ShrinkError
from bytepair.shrinking import STRATEGIES, dropped_kinds, merge_parents, shrink, token_kind, token_use
from conftest import DATA, corpus


@pytest.fixture(scope="module")
def o200k():
    return bytepair.get_encoding("o200k_base")


def test_token_use_matches_encode(o200k):
    docs = corpus("ko_prose.txt").split("\n\n") + ["<|endoftext|> is text here", "x" * (1 << 20) + " y"]
    want = Counter(i for d in docs for i in o200k.encode_ordinary(d))
    got = token_use(o200k, docs, num_threads=2)
    assert got.dtype == np.int64 and got.shape == (o200k.n_vocab,)
    assert {i: int(c) for i, c in enumerate(got) if c} == dict(want)


def test_data_kinds_agree(o200k, tmp_path):
    a, b = corpus("en_kjv.txt"), corpus("code_python.txt")
    (tmp_path / "a.txt").write_text(a, encoding="utf-8")
    (tmp_path / "b.txt").write_text(b, encoding="utf-8")
    by_list = token_use(o200k, [a, b])
    by_paths = token_use(o200k, [tmp_path / "a.txt", tmp_path / "b.txt"])
    by_gen = token_use(o200k, (t for t in [a, b]))
    assert (by_list == by_paths).all() and (by_list == by_gen).all()
    assert (token_use(o200k, tmp_path / "a.txt") == token_use(o200k, a)).all()


def test_keep_is_the_new_size_and_id_map_follows_tokens(o200k):
    small, id_map = shrink(o200k, corpus("en_austen.txt"), keep=5000)
    assert small.n_vocab == 5000 and id_map.shape == (5000,) and id_map.dtype == np.int64
    m = small.n_vocab - len(small.special_tokens)
    assert (np.diff(id_map[:m]) > 0).all()  # rank order kept
    assert set(range(256)) <= set(id_map[:m].tolist())  # every byte
    for new in range(m):
        assert small.decode_single_token_bytes(new) == o200k.decode_single_token_bytes(int(id_map[new]))
    assert {s: int(id_map[i]) for s, i in small.special_tokens.items()} == o200k.special_tokens
    assert small.pattern == o200k.pattern and small.name == "o200k_base-shrunk"


def test_min_count_keeps_every_token_used_that_often(o200k):
    text = corpus("en_kjv.txt")
    use = token_use(o200k, text)
    _small, id_map = shrink(o200k, text, min_count=3)
    kept = set(id_map.tolist())
    assert set(np.flatnonzero(use >= 3).tolist()) <= kept
    # nothing beyond those, their closures, the bytes and the specials
    parents = merge_parents(o200k)
    need = set(range(256)) | set(o200k.special_tokens.values())
    stack = np.flatnonzero(use >= 3).tolist()
    while stack:
        t = stack.pop()
        if t >= 0 and t not in need:
            need.add(t)
            stack += parents[t].tolist()
    assert kept == need
    capped, _ = shrink(o200k, text, min_count=3, keep=1000)
    assert capped.n_vocab == 1000


def test_keep_tokens_stay_with_their_closure(o200k):
    want = [" tokenizer", " 한국", o200k.encode(" unbelievable")[0], "<|endofprompt|>", b" \xec\x9e\x90"]
    small, id_map = shrink(o200k, "a a a", keep=400, keep_tokens=want)
    for w in want:
        if isinstance(w, int):
            assert w in id_map
        elif w in o200k.special_tokens:
            assert small.special_tokens[w] == int(np.flatnonzero(id_map == o200k.special_tokens[w])[0])
        else:
            b = w.encode() if isinstance(w, str) else w
            # one token, built by merges (not only by the whole-piece shortcut)
            assert len(small._core.encode_piece_with(b, "scan")) == 1
    assert id_map[small.encode(" tokenizer")].tolist() == o200k.encode(" tokenizer")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategies(o200k, strategy):
    small, id_map = shrink(o200k, corpus("ko_prose.txt"), keep=4000, strategy=strategy)
    use = token_use(o200k, corpus("ko_prose.txt"))
    if strategy == "count":
        # only tokens the sample uses and their closures: fewer than the budget here
        assert small.n_vocab < 4000
    else:
        assert small.n_vocab == 4000
    assert set(np.flatnonzero(use).tolist()) <= set(id_map.tolist())


def test_prior_fills_with_the_domains_script(o200k):
    text = corpus("ko_prose.txt")
    use = token_use(o200k, text)
    n_seen = int((use > 0).sum())
    budget = n_seen + 20000
    kinds = {}
    for strategy in ("prior", "rank"):
        _small, id_map = shrink(o200k, counts=use, keep=budget, strategy=strategy)
        extra = [int(i) for i in id_map if i < o200k.n_vocab - 2 and not use[i]]
        kinds[strategy] = Counter(token_kind(o200k.decode_single_token_bytes(i)) for i in extra)
    # the prior fills with tokens of the sample's alphabet (Hangul, Latin:
    # the excerpt is software help), the plain rank order with any script
    others = ("CYRILLIC", "ARABIC", "DEVANAGARI", "GREEK")
    assert sum(kinds["prior"][k] for k in others) == 0
    assert sum(kinds["rank"][k] for k in others) > 100


def test_token_kinds_and_dropped_kinds(o200k):
    assert token_kind(b"\t\t") == "whitespace" and token_kind(" объ".encode()) == "CYRILLIC"
    assert token_kind(b"x1") == "mixed" and token_kind(b"==") == "punctuation"
    _, id_map = shrink(o200k, corpus("ko_prose.txt"), keep=2000)
    kinds = dropped_kinds(o200k, id_map)
    assert sum(kinds.values()) == len(o200k.mergeable_ranks) - (2000 - 2)
    assert kinds["LATIN"] > kinds.get("HANGUL", 0)


def test_empty_corpus_is_refused(o200k):
    with pytest.raises(ShrinkError, match="sample of the domain is empty"):
        shrink(o200k, "", keep=258, strategy="count")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"keep": None}, ShrinkError, "give keep="),
    ({"keep": 257}, ShrinkError, r"keep must be between 258 \(256 bytes \+ 2 special tokens\)"),
    ({"keep": 10**9}, ShrinkError, "keep must be between"),
    ({"keep": True}, TypeError, "keep must be an int"),
    ({"keep": 300.0}, TypeError, "keep must be an int"),
    ({"keep": 300, "min_count": 0}, ShrinkError, "min_count must be between 1"),
    ({"keep": 300, "strategy": "best"}, ShrinkError, "strategy must be one of prior, rank, count"),
    ({"keep": 300, "keep_tokens": ["not one token at all"]}, ShrinkError, "is not a single token"),
    ({"keep": 300, "keep_tokens": [10**7]}, ShrinkError, "id 10000000 is not a token"),
    ({"keep": 300, "keep_tokens": "abc"}, TypeError, "not a single str"),
    ({"keep": 300, "keep_tokens": [1.5]}, TypeError, "str, bytes or int"),
    ({"keep": 260, "keep_tokens": [" unbelievable", " tokenizer"]}, ShrinkError, "too small"),
])
def test_errors(o200k, kwargs, error, match):
    with pytest.raises(error, match=match):
        shrink(o200k, "some text", **kwargs)


def test_argument_errors(o200k):
    with pytest.raises(TypeError, match="either data"):
        shrink(o200k, keep=300)
    with pytest.raises(TypeError, match="either data"):
        shrink(o200k, "x", keep=300, counts=np.zeros(o200k.n_vocab, dtype=np.int64))
    with pytest.raises(ShrinkError, match="counts must be 200019 non-negative integers"):
        shrink(o200k, counts=np.zeros(5, dtype=np.int64), keep=300)
    with pytest.raises(ShrinkError, match="counts must be"):
        shrink(o200k, counts=np.full(o200k.n_vocab, -1), keep=300)
    with pytest.raises(TypeError, match="bytepair.Tokenizer"):
        shrink("o200k_base", "x", keep=300)
    with pytest.raises(TypeError, match="not bytes"):
        shrink(o200k, b"bytes", keep=300)
    with pytest.raises(FileNotFoundError):
        shrink(o200k, [Path(DATA) / "README.md", Path("/nonexistent/file.txt")], keep=300)
    assert issubclass(ShrinkError, ValueError)


def test_grown_tokenizer_with_a_gap():
    # gpt2 grown by extend(): its special token sits in a gap below the new merges
    text = corpus("ko_prose.txt")
    big = bytepair.extend(bytepair.get_encoding("gpt2"), text, 50257 + 300)
    assert big.gaps == [50256]
    small, id_map = shrink(big, text, keep=2000)
    assert small.gaps == [] and small.special_tokens == {"<|endoftext|>": 1999} and id_map[-1] == 50256
    assert (id_map[:-1] > 50256).sum() > 0  # some of the new merges stay
    head = text[:3000]
    assert set(big.encode(head)) <= set(id_map.tolist())
    assert id_map[small.encode(head)].tolist() == big.encode(head)
    assert small.decode(small.encode(text)) == text
