"""CharTokenizer (the XSLM character-level tokenizer): properties, files, errors."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import CharTokenizer, reference
from bytepair.errors import FormatError, TrainingError, UnknownTokenError, VocabError

small_text = st.text(alphabet=st.sampled_from("ab c\n한😀\ufffd"), min_size=1, max_size=60)


def brute_force_pairs(ids, vocab):
    """Oracle for one training round: (count, first index) of every allowed pair."""
    out = {}
    for i in range(len(ids) - 1):
        p = (ids[i], ids[i + 1])
        if "\n" in vocab[p[0]] + vocab[p[1]]:
            continue
        n, first = out.get(p, (0, i))
        out[p] = (n + 1, first)
    return out


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(small_text, st.integers(0, 25))
def test_train_follows_the_rule_round_by_round(text, k):
    tok = CharTokenizer.train(text, k)
    vocab = tok.vocab
    ids = [vocab.index(c) for c in text]
    for (pair, new_id) in tok.merges:
        stats = brute_force_pairs(ids, vocab)
        best = min(stats, key=lambda p: (-stats[p][0], stats[p][1]))
        assert pair == best and stats[best][0] >= 2
        assert vocab[new_id] == vocab[pair[0]] + vocab[pair[1]]
        ids = reference.merge_pair(ids, pair, new_id)
    if len(tok.merges) < k:  # stopped early: nothing left that occurs twice
        assert all(n < 2 for n, _ in brute_force_pairs(ids, vocab).values())
    assert tok.encode(text) == list(ids)


@settings(max_examples=150, deadline=None)
@given(small_text, st.integers(0, 25), st.text(max_size=40))
def test_roundtrip_and_unknowns(text, k, other):
    tok = CharTokenizer.train(text, k)
    assert tok.decode(tok.encode(text)) == text
    known = set(text)
    want = "".join(c if c in known else "\ufffd" for c in other)
    assert tok.decode(tok.encode(other)) == want


@settings(max_examples=100, deadline=None)
@given(small_text, st.integers(0, 20))
def test_vocab_layout_and_newline(text, k):
    tok = CharTokenizer.train(text, k)
    alphabet = sorted(set(text) - {"\ufffd"})
    assert tok.vocab[: 1 + len(alphabet)] == ["\ufffd", *alphabet]
    assert tok.vocab_size == 1 + len(alphabet) + len(tok.merges)
    assert len(tok.merges) <= k
    assert all("\n" not in s for s in tok.vocab[1 + len(alphabet):])


@settings(max_examples=60, deadline=None)
@given(small_text, st.integers(0, 20))
def test_fewer_merges_is_a_prefix(text, k):
    big = CharTokenizer.train(text, k + 5)
    small = CharTokenizer.train(text, k)
    assert small.merges == big.merges[: len(small.merges)]


def test_vocab_size_argument():
    text = "low lower lowest"
    alphabet = 1 + len(set(text))
    assert CharTokenizer.train(text, vocab_size=alphabet + 3) == CharTokenizer.train(text, 3)
    assert CharTokenizer.train(text, vocab_size=alphabet).merges == []


def test_properties_are_copies():
    tok = CharTokenizer.train("abab", 1)
    tok.vocab.append("zz")
    tok.merges.clear()
    assert tok.vocab_size == 4 and len(tok.merges) == 1


def test_exported():
    assert bytepair.CharTokenizer is CharTokenizer
    assert "CharTokenizer" in bytepair.__all__


# --------------------------------------------------------------------------- files


@settings(max_examples=40, deadline=None)
@given(small_text, st.integers(0, 15))
def test_save_load_roundtrip(tmp_path_factory, text, k):
    path = tmp_path_factory.mktemp("char") / "tokenizer.json"
    tok = CharTokenizer.train(text, k)
    tok.save(path)
    back = CharTokenizer.load(path)
    assert back == tok
    assert json.loads(path.read_text(encoding="utf-8")) == tok.to_dict()


def test_save_replaces_atomically(tmp_path):
    path = tmp_path / "tokenizer.json"
    CharTokenizer.train("abab", 1).save(path)
    CharTokenizer.train("cdcdcd", 2).save(path)
    assert CharTokenizer.load(path) == CharTokenizer.train("cdcdcd", 2)
    assert os.listdir(tmp_path) == ["tokenizer.json"]  # no temporary file left


def test_save_into_missing_folder_leaves_nothing(tmp_path):
    with pytest.raises(OSError):
        CharTokenizer.train("abab", 1).save(tmp_path / "nope" / "tokenizer.json")
    assert os.listdir(tmp_path) == []


GOOD = {"vocab": ["\ufffd", "a", "b", "ab"], "merges": [[[1, 2], 3]]}


@pytest.mark.parametrize("content,where", [
    ('{"vocab": ["\\ufffd", "a"', "truncated"),
    ("[1, 2]", "not a character tokenizer"),
    ('{"vocab": []}', "not a character tokenizer"),
    (json.dumps({"vocab": "abc", "merges": []}), "$.vocab"),
    (json.dumps({"vocab": ["a", "b"], "merges": []}), "$.vocab[0]"),
    (json.dumps({"vocab": ["\ufffd", "a", "a"], "merges": []}), "$.vocab[2]"),
    (json.dumps({"vocab": ["\ufffd", "ab"], "merges": []}), "$.vocab[1]"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": {}}), "$.merges"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": [[1, 2, 3]]}), "$.merges[0]"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": [[[1, 2], 4]]}), "$.merges[0]"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": [[[2, 1], 3]]}), "$.merges[0]"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": [[[1, 9], 3]]}), "$.merges[0]"),
    (json.dumps({"vocab": GOOD["vocab"], "merges": [[[1, True], 3]]}), "$.merges[0]"),
    (json.dumps({"vocab": ["\ufffd", "a"], "merges": [[[1, 1], 2], [[1, 1], 3]]}), "$.merges"),
])
def test_load_malformed_names_path_and_place(tmp_path, content, where):
    path = tmp_path / "tokenizer.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError) as e:
        CharTokenizer.load(path)
    assert str(path) in str(e.value)
    assert where in str(e.value)
    assert isinstance(e.value, ValueError)


def test_load_good_and_not_utf8_and_missing(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    assert CharTokenizer.load(path).encode("abba") == [3, 2, 1]
    path.write_bytes(b'{"vocab": ["\xff"], "merges": []}')
    with pytest.raises(FormatError, match="UTF-8"):
        CharTokenizer.load(path)
    with pytest.raises(FileNotFoundError):
        CharTokenizer.load(tmp_path / "missing.json")


def test_constructor_validates():
    assert CharTokenizer(GOOD["vocab"], [((1, 2), 3)]).encode("ab") == [3]
    with pytest.raises(VocabError, match="earlier ids"):
        CharTokenizer(GOOD["vocab"], [((2, 2), 3)])


# --------------------------------------------------------------------------- bad input


def test_bad_training_input():
    with pytest.raises(TrainingError, match="empty"):
        CharTokenizer.train("", 3)
    with pytest.raises(TrainingError, match=">= 0"):
        CharTokenizer.train("abc", -1)
    with pytest.raises(TypeError, match="str"):
        CharTokenizer.train(b"abc", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int"):
        CharTokenizer.train("abc", 2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int"):
        CharTokenizer.train("abc", True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="either"):
        CharTokenizer.train("abc", 3, vocab_size=10)
    with pytest.raises(TrainingError, match="at least 4"):
        CharTokenizer.train("abc", vocab_size=3)
    assert issubclass(TrainingError, ValueError)


def test_bad_encode_decode_input():
    tok = CharTokenizer.train("abab", 1)
    with pytest.raises(TypeError):
        tok.encode(b"ab")  # type: ignore[arg-type]
    with pytest.raises(UnknownTokenError, match="4"):
        tok.decode([4])
    with pytest.raises(UnknownTokenError, match="-1"):
        tok.decode([-1])  # a negative id must not index from the end
    with pytest.raises(TypeError):
        tok.decode(["a"])  # type: ignore[list-item]
    assert isinstance(UnknownTokenError("x"), KeyError)
