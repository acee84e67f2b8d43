"""bytepair.reference, function by function, plus hypothesis properties.

The reference is the specification, so these tests check it against statements
of the rules and small hand-worked cases, not against its own output.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference as R

BYTES = {bytes([i]): i for i in range(256)}


def ranks_of(vocab):
    return {b: i for i, b in vocab.items()}


# --------------------------------------------------------------------------- byte table


def test_bytes_to_unicode_is_a_printable_bijection():
    t = R.bytes_to_unicode()
    assert sorted(t) == list(range(256))
    assert len(set(t.values())) == 256
    assert all(c.isprintable() and not c.isspace() for c in t.values())
    assert t[ord("A")] == "A" and t[0xFF] == "ÿ" and t[0xAD] == "Ń"  # soft hyphen is remapped


# --------------------------------------------------------------------------- training pieces


def test_split_special():
    assert R.split_special("a<|e|>b<|e|>", ["<|e|>"]) == ["a", "b", ""]
    assert R.split_special("abc", []) == ["abc"]
    # the longest special wins where two start at the same place
    assert R.split_special("x<a><a>b>y", ["<a>", "<a>b>"]) == ["x", "", "y"]
    # special text with regex metacharacters is literal
    assert R.split_special("1+1=2", ["+"]) == ["1", "1=2"]


def test_count_chunks_first_seen_order_and_specials():
    counts = R.count_chunks(["b a b", "a c"], r"\S+")
    assert counts == {b"b": 2, b" ": 3, b"a": 2, b"c": 1}  # unmatched spaces are chunks too: no text lost
    assert list(counts) == [b"b", b" ", b"a", b"c"]
    assert R.count_chunks(["ab<s>ab", "ab"], None, ["<s>"]) == {b"ab": 3}
    assert R.count_chunks(["x y", "x y"], None) == {b"x y": 2}
    assert R.count_chunks([""], None) == {}
    assert R.count_chunks(["한 한"], "gpt2") == {"한".encode(): 1, " 한".encode(): 1}


def test_count_pairs_weighted_and_ordered():
    stats = R.count_pairs({(5, 6, 5, 6): 3, (6, 5): 2, (7,): 9})
    assert stats == {(5, 6): 6, (6, 5): 5}
    assert list(stats) == [(5, 6), (6, 5)]
    assert R.count_pairs({(1, 1, 1): 1}) == {(1, 1): 2}  # overlapping occurrences count


@pytest.mark.parametrize("ids,want", [
    ((1, 2, 1, 2), (9, 9)),
    ((1, 1, 1, 1, 1), (9, 9, 1)),
    ((2, 1, 2), (2, 9)),
    ((1,), (1,)),
    ((), ()),
])
def test_merge_pair(ids, want):
    assert R.merge_pair(ids, (1, 2) if 2 in ids else (1, 1), 9) == want


def test_best_pair():
    assert R.best_pair({}, {}) is None
    assert R.best_pair({(1, 2): 2, (3, 4): 2}, {}) == (1, 2)  # first met wins a tie
    assert R.best_pair({(1, 2): 2, (3, 4): 3}, {}) == (3, 4)
    vocab = {1: b"aaa", 2: b"b", 3: b"c", 4: b"d"}
    assert R.best_pair({(1, 2): 5, (3, 4): 1}, vocab, max_token_length=3) == (3, 4)
    assert R.best_pair({(1, 2): 5}, vocab, max_token_length=3) is None


def test_train_from_counts_tie_uses_chunk_order():
    # (c, d) and (a, b) both occur 2 times; "cd" appears first in the text
    assert R.train_from_counts({b"cd": 2, b"ab": 2}, 1) == [(99, 100)]
    assert R.train_from_counts({b"ab": 2, b"cd": 2}, 1) == [(97, 98)]
    # a more frequent later chunk still wins on count
    assert R.train_from_counts({b"cd": 2, b"ab": 3}, 1) == [(97, 98)]


def test_train_from_counts_stops():
    assert R.train_from_counts({b"ab": 1}, 5) == [(97, 98)]
    assert R.train_from_counts({b"ab": 1}, 5, min_frequency=2) == []
    assert R.train_from_counts({b"a": 7}, 5) == []
    assert R.train_from_counts({b"abab": 1}, 0) == []


def test_overlapping_occurrences_count():
    # "aaa" holds (a, a) twice (positions 0 and 1) although merging it saves only
    # one token; the count is what min_frequency (and the char tokenizer's stop
    # below 2) compares against, in every trainer
    assert R.train_from_counts({b"aaa": 1}, 1, min_frequency=2) == [(97, 97)]
    assert R.train_from_counts({b"aa": 1}, 1, min_frequency=2) == []
    assert bytepair.train("aaa", 257, pattern=None, min_frequency=2).merges == [(97, 97)]
    # ... so a run of 5 "z" (4 overlapping occurrences) beats a pair seen 3 times apart
    assert R.train_from_counts({b"xy xy xy ": 1, b"zzzzz": 1}, 1) == [(122, 122)]


def test_train_from_counts_max_token_length():
    merges = R.train_from_counts({b"aaaaaaaa": 5}, 10, max_token_length=2)
    assert merges == [(97, 97)]  # "aaaa" would be 4 bytes
    vocab = R.build_vocab(R.train_from_counts({b"the cat sat on the mat": 3}, 30, max_token_length=3))
    assert max(len(t) for t in vocab.values()) == 3


def test_train_specials_and_sizes():
    merges, _, sp = R.train(["ab ab <|e|> ab"], 259, None, ["<|e|>", "<p>"])
    assert len(merges) == 1 and sp == {"<|e|>": 257, "<p>": 258}
    # special text is cut out before counting: its bytes are never merged
    merges, _, _ = R.train("<|e|><|e|><|e|>x", 300, None, ["<|e|>"])
    assert merges == []
    with pytest.raises(ValueError, match="below 256"):
        R.train("abc", 256, None, ["<s>"])
    with pytest.raises(ValueError, match="distinct"):
        R.train("abc", 300, None, ["<s>", "<s>"])
    with pytest.raises(ValueError, match="distinct"):
        R.train("abc", 300, None, [""])


def test_train_iterable_of_texts_never_merges_across_documents():
    merges, vocab, _ = R.train(iter(["ab", "ab", "ab"]), 300, None)
    assert [vocab[256 + k] for k in range(len(merges))] == [b"ab"]


def test_build_vocab():
    vocab = R.build_vocab([(97, 98), (256, 256)])
    assert len(vocab) == 258 and vocab[257] == b"abab" and vocab[0] == b"\x00"


# --------------------------------------------------------------------------- encoding


def test_encode_piece_lowest_rank_first_not_longest_match():
    ranks = dict(BYTES)
    ranks.update({b"bc": 256, b"ab": 257})
    # "bc" has the lower rank, so it merges first; a longest-match tokenizer
    # would take "ab" from the left instead
    assert R.encode_piece(b"abc", ranks) == [97, 256]
    # any adjacent pair whose joined bytes are a token can merge (tiktoken's rule)
    ranks[b"abc"] = 258
    assert R.encode_piece(b"abcd", ranks) == [258, 100]
    assert R.encode_piece(b"abc", ranks) == [258]  # a piece that is a token maps straight to it
    assert R.encode_piece(b"", ranks) == []


def test_encode_piece_leftmost_on_equal_rank():
    ranks = dict(BYTES)
    ranks[b"aa"] = 256
    assert R.encode_piece(b"aaa", ranks) == [256, 97]


def test_encode_specials():
    ranks = dict(BYTES)
    specials = {"<s>": 256, "<s>x": 257}
    assert R.encode("a<s>b", ranks, None, specials, ["<s>"]) == [97, 256, 98]
    assert R.encode("a<s>b", ranks, None, specials) == [97, 60, 115, 62, 98]  # not allowed: text
    assert R.encode("<s>x<s>", ranks, None, specials, "all") == [257, 256]  # longest first


def test_decode():
    vocab = R.build_vocab([(0xED, 0x95)])
    assert R.decode_bytes([256, 0x9C], vocab) == "한".encode()
    assert R.decode([256, 0x9C], vocab) == "한"
    assert R.decode([256], vocab) == "\ufffd"


def test_reference_encode_matches_gpt2():
    # the reference encoder with GPT-2's ranks gives tiktoken's ids
    enc = bytepair.get_encoding("gpt2")
    ranks = enc.mergeable_ranks
    for text in ["Hello world", "The quick brown fox jumps over the lazy dog.", "한국어 😀 it's   ok"]:
        assert R.encode(text, ranks, "gpt2") == enc.encode(text)


# --------------------------------------------------------------------------- properties

corpus_text = st.text(alphabet=st.sampled_from("ab ab c.\n한😀"), min_size=1, max_size=50)
patterns = st.sampled_from([None, "gpt2", "o200k", r"\S+|\s+"])


@settings(max_examples=60, deadline=None)
@given(st.lists(corpus_text, min_size=1, max_size=4), st.integers(0, 40), patterns, st.text(max_size=60))
def test_roundtrip(corpus, n, pattern, text):
    _, vocab, _ = R.train(corpus, 256 + n, pattern)
    ids = R.encode(text, ranks_of(vocab), pattern)
    assert R.decode(ids, vocab) == text
    assert R.decode_bytes(ids, vocab) == text.encode()


@settings(max_examples=60, deadline=None)
@given(st.lists(corpus_text, min_size=1, max_size=4), st.integers(0, 40), patterns)
def test_merges_only_use_earlier_tokens(corpus, n, pattern):
    merges, vocab, _ = R.train(corpus, 256 + n, pattern)
    assert len(merges) <= n
    for k, (a, b) in enumerate(merges):
        assert a < 256 + k and b < 256 + k
        assert vocab[256 + k] == vocab[a] + vocab[b]
    assert len(set(vocab.values())) == len(vocab)  # no token is made twice


@settings(max_examples=60, deadline=None)
@given(st.lists(corpus_text, min_size=1, max_size=4), st.integers(0, 30), st.integers(0, 10), patterns)
def test_training_to_a_smaller_vocab_is_truncation(corpus, n, extra, pattern):
    small, _, _ = R.train(corpus, 256 + n, pattern)
    big, _, _ = R.train(corpus, 256 + n + extra, pattern)
    assert small == big[: len(small)]
    if len(small) < n:  # the corpus ran out of pairs
        assert big == small


@settings(max_examples=60, deadline=None)
@given(st.lists(corpus_text, min_size=1, max_size=4), st.integers(0, 30), patterns)
def test_encoding_the_training_text_applies_every_merge(corpus, n, pattern):
    # each chunk of the training text encodes to exactly the segmentation that
    # training reached (merge order = rank order)
    merges, vocab, _ = R.train(corpus, 256 + n, pattern)
    ranks = ranks_of(vocab)
    for chunk in R.count_chunks(corpus, pattern):
        seq = tuple(chunk)
        for k, pair in enumerate(merges):
            seq = R.merge_pair(seq, pair, 256 + k)
        assert R.encode_piece(chunk, ranks) == list(seq)


@settings(max_examples=40, deadline=None)
@given(st.lists(corpus_text, min_size=1, max_size=4), st.integers(0, 30), patterns, st.text(max_size=60))
def test_public_api_equals_reference(corpus, n, pattern, text):
    merges, vocab, _ = R.train(corpus, 256 + n, pattern)
    if len(merges) < n:
        with pytest.warns(UserWarning):
            tok = bytepair.train(corpus, 256 + n, pattern=pattern)
    else:
        tok = bytepair.train(corpus, 256 + n, pattern=pattern)
    assert tok.merges == merges
    assert tok.token_bytes_list == [vocab[i] for i in range(len(vocab))]
    assert tok.encode_ordinary(text) == R.encode(text, ranks_of(vocab), pattern)
