"""Superword training (``train(superword=T)``): the core equals
``reference.train_superword`` (hypothesis and real-text prefixes), the span
pattern splits like the reference's, the rules hold on every token, results do
not depend on threads, files or caches, and bad arguments get clear errors."""

from __future__ import annotations

import os
import random
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
import bytepair.counts
from bytepair import _core, patterns
from bytepair import reference as R
from bytepair.counts import count_chunks
from bytepair.errors import TrainingError
from bytepair.inspect.audit import audit
from bytepair.superword import superword_tokens, transition_size
from conftest import CORPORA, HYPOTHESIS_SCALE, corpus


def _core_train(data, vocab_size, transition=None, **kw):
    kw.setdefault("superword", transition)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small corpora run out of pairs
        return bytepair.train(data, vocab_size, **kw)


def _words(token: bytes) -> int:
    return sum(1 for w in token.split(b" ") if w)


# ---------------------------------------------------------------- core == reference

WORDS = ["the", "of", "a", "cat", "dog", "ran", "to", "1", "42", "x:", ":", "\n", ".", ",", "the\n", "é", "토큰"]


@settings(max_examples=60 * HYPOTHESIS_SCALE, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join), min_size=1, max_size=6),
    extra=st.integers(0, 30),
    stage2=st.integers(0, 40),
    max_words=st.sampled_from([1, 2, 4, None]),
    pattern=st.sampled_from(["o200k", "gpt2", None]),
)
def test_core_equals_reference_on_generated_text(docs, extra, stage2, max_words, pattern):
    t = 256 + extra
    tok = _core_train(docs, t + stage2, t, max_words=max_words, pattern=pattern)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want, _, _ = R.train_superword(docs, t + stage2, t, pattern, max_words=max_words)
    assert tok.merges == want


@pytest.mark.parametrize("name", CORPORA)
def test_core_equals_reference_on_real_text(name):
    text = corpus(name)[:2500]
    docs = text.split("\n\n")
    tok = _core_train(docs, 256 + 160, 256 + 80, special_tokens=["<|e|>"])
    want, _, specials = R.train_superword(docs, 256 + 160, 256 + 80, special_tokens=["<|e|>"])
    assert tok.merges == want
    assert tok.special_tokens == specials


@pytest.mark.parametrize("name", CORPORA)
def test_span_pattern_splits_like_the_reference(name):
    text = corpus(name)
    spans = [text[a:b] for a, b in _char_spans(text, _core.pretokenize_spans(patterns.SUPERWORD, text))]
    assert spans == R.pretokenize(text, R.SPAN_PATTERN)
    assert "".join(spans) == text


def _char_spans(text, byte_spans):
    raw = text.encode("utf-8")
    for a, b in byte_spans:
        yield len(raw[:a].decode("utf-8")), len(raw[:b].decode("utf-8"))


@pytest.mark.parametrize("name", CORPORA)
def test_encoding_equals_the_reference(name):
    text = corpus(name)
    tok = _core_train(text[:20000], 256 + 600, 256 + 400)
    ranks = {t: i for i, t in enumerate(tok.token_bytes_list)}
    sample = text[20000:40000]
    assert tok.encode(sample) == R.encode(sample, ranks, R.SPAN_PATTERN)


# ---------------------------------------------------------------- the rules


@pytest.mark.parametrize("max_words", [1, 2, 4])
def test_every_token_keeps_the_rules(max_words):
    text = corpus("en_austen.txt") + corpus("en_pydocs.txt")
    tok = _core_train(text, 4000, 2000, max_words=max_words)
    new = tok.token_bytes_list[2000:]
    assert len(new) == 2000
    assert all(_words(t) <= max_words for t in new)
    assert not any(b": " in t for t in tok.token_bytes_list)
    assert not any(t.rstrip(b"\r\n").count(b"\n") for t in new)
    assert any(_words(t) == max_words for t in new)  # the bound is reached, not merely respected
    if max_words > 1:
        assert b" of the" in set(new)


def test_superword_tokens_are_listed_and_audited():
    tok = _core_train(corpus("en_austen.txt"), 3000, 2000)
    found = superword_tokens(tok)
    assert found and all(i >= 2000 for i in found)
    assert all(len(t.split()) >= 2 for t in found.values())
    report = audit(tok)
    assert report.superwords == sorted(found) and report.to_dict()["superwords"] == sorted(found)
    assert f"superwords ({len(found):,};" in report.to_text()
    assert audit(bytepair.train(corpus("en_austen.txt"), 3000)).superwords == []


def test_transition_equal_to_vocab_size_is_plain_training_with_span_pattern():
    text = corpus("en_kjv.txt")
    tok = _core_train(text, 1000, 1000)
    assert tok.merges == bytepair.train(text, 1000).merges
    assert tok.pattern == patterns.SUPERWORD


# ---------------------------------------------------------------- at scale: files, threads, caches


def test_threads_files_and_cache_give_the_same_merges(tmp_path):
    paths = []
    for name in CORPORA[:3]:
        p = tmp_path / name
        p.write_text(corpus(name), encoding="utf-8")
        paths.append(p)
    texts = [corpus(n) for n in CORPORA[:3]]
    one = _core_train(texts, 3000, 2000, num_threads=1)
    two = _core_train(paths, 3000, 2000, num_threads=2, cache_dir=tmp_path / "cache")
    again = _core_train(paths, 3000, 2000, num_threads=2, cache_dir=tmp_path / "cache")
    assert one.merges == two.merges == again.merges
    assert len(list((tmp_path / "cache").iterdir())) >= 6  # word and span counts of each file


def _files(tmp_path, names):
    paths = []
    for name in names:
        p = tmp_path / name
        p.write_text(corpus(name), encoding="utf-8")
        paths.append(p)
    return paths


def test_one_cache_folder_keeps_patterns_and_specials_apart(tmp_path):
    """Word and span counts, with one set of special tokens or another, share a
    cache folder and never stand in for each other: each run equals its
    uncached twin."""
    paths = _files(tmp_path, CORPORA[:2])
    cache = tmp_path / "cache"
    runs = [dict(superword=2000, special_tokens=["<|endoftext|>"]), dict(superword=2000, special_tokens=["the"]),
            dict(superword=2000, pattern="gpt2"), dict(superword=None, pattern="superword")]
    for kw in runs:
        want = _core_train(paths, 3000, **kw)
        got = _core_train(paths, 3000, cache_dir=cache, **kw)
        assert got.merges == want.merges, kw
    # per file: words by (o200k, <|endoftext|>), (o200k, "the"), (gpt2, none); spans by the three special
    # sets, those without specials shared by the last two runs (the same counting)
    assert len(list(cache.iterdir())) == 2 * 6


def test_stopped_superword_run_resumes_without_counting_cached_files(tmp_path, monkeypatch):
    """Ctrl-C while stage 2 counts the second file's spans: the same call
    again counts only the spans not yet cached (no words, no first file) and
    gives the merges of a run never stopped."""
    paths = _files(tmp_path, CORPORA[:3])
    want = _core_train(paths, 3000, 2000)
    real = bytepair.counts._feed_file
    fed = []

    def feed(counter, path, setup):
        fed.append((os.path.basename(path), setup.pattern == patterns.SUPERWORD))
        if len(fed) == 5:  # the three files' words, the first file's spans, then Ctrl-C
            raise KeyboardInterrupt
        return real(counter, path, setup)

    monkeypatch.setattr(bytepair.counts, "_feed_file", feed)
    with pytest.raises(KeyboardInterrupt):
        _core_train(paths, 3000, 2000, cache_dir=tmp_path / "cache")
    assert [s for _, s in fed] == [False, False, False, True, True]
    assert len(list((tmp_path / "cache").iterdir())) == 4
    fed.clear()
    got = _core_train(paths, 3000, 2000, cache_dir=tmp_path / "cache")
    assert fed == [(CORPORA[1], True), (CORPORA[2], True)]
    assert got.merges == want.merges


def test_spilled_span_counting_gives_the_same_merges(tmp_path):
    # random word pairs, one per line: ~80,000 distinct spans, counted in 64 KB blocks under a 256 KB limit
    rng = random.Random(5)
    words = [f"w{i:x}" for i in range(3000)]
    text = "\n".join(f"{rng.choice(words)} {rng.choice(words)} of the" for _ in range(80_000))
    path = tmp_path / "lines.txt"
    path.write_text(text, encoding="utf-8")
    counter = _core.ChunkCounter(patterns.SUPERWORD, [], None, 2, memory_limit=1 << 18, spill_dir=tmp_path,
                                 block_size=1 << 16)
    counter.feed_texts([text])
    assert counter.spilled_runs > 2
    spilled = counter.finish()
    free = count_chunks(path, pattern=patterns.SUPERWORD, num_threads=1).table
    ranges = count_chunks(path, pattern=patterns.SUPERWORD, num_threads=2, block_size=1 << 16,
                          stream_block=1 << 16).table
    base = _core_train([path], 700, 700)
    want = _core.extend_merges(base._core, free, 700, 500, max_words=4)
    assert _core.extend_merges(base._core, spilled, 700, 500, max_words=4) == want
    assert _core.extend_merges(base._core, ranges, 700, 500, max_words=4) == want
    assert len(want) == 500


def test_a_limit_the_node_loop_cannot_keep_gives_the_same_merges_by_the_lean_loop():
    # distinct lines of 25 bytes. 250,000 fit 20 MB as a table but not with their ids at 4 bytes: the lean
    # loop learns from the table. 320,000 do not fit as counted: counting spills them to runs, and the
    # lean loop learns from the runs (no table); under 20 MB even that loop refuses, naming its need
    rng = random.Random(7)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(5)) for _ in range(3000)]
    lines = [f"{rng.choice(words)} {rng.choice(words)} {rng.choice(words)} of the" for _ in range(320_000)]
    for n, limit in ((250_000, "20MB"), (320_000, "30MB")):
        text = "\n".join(lines[:n])
        want = _core_train(text, 2_000, 800, num_threads=2)
        assert len(want.merges) == 2_000 - 256
        assert _core_train(text, 2_000, 800, memory_limit=limit, num_threads=2).merges == want.merges
    with pytest.raises(TrainingError, match=r"the lean merge loop over [\d,]+ tokens in [\d,]+ distinct spans "
                                            r"needs about [\d,]+ MB, more than memory_limit \(20 MB\)") as e:
        _core_train("\n".join(lines), 2_000, 800, memory_limit="20MB")
    assert e.value.argument == "memory_limit" and e.value.limit == 20 * 10**6 < e.value.need


def test_the_core_learns_the_same_merges_by_either_loop_and_refuses_a_limit_neither_keeps():
    text = "".join(corpus(n)[:400_000] for n in CORPORA)
    base = _core_train(text, 900, 900)
    table = count_chunks(text, pattern=patterns.SUPERWORD).table
    table_bytes = table.arena_len + 48 * len(table)
    want = _core.extend_merges(base._core, table, 900, 300, max_words=4)
    assert len(want) == 300
    with pytest.raises(TrainingError, match=r"the lean merge loop over [\d,]+ tokens in [\d,]+ distinct spans "
                                            r"needs about") as e:
        _core.extend_merges(base._core, table, 900, 300, max_words=4, memory_limit=table_bytes)
    err = e.value
    assert err.argument == "memory_limit" and err.limit == table_bytes < err.need
    # at its need exactly the lean loop runs (the table it reads is part of that need): the same merges
    assert _core.extend_merges(base._core, table, 900, 300, max_words=4, memory_limit=err.need) == want
    # a consumed table gives the same merges and is emptied
    spans = len(table)
    assert _core.extend_merges(base._core, table, 900, 300, max_words=4, consume=True,
                               memory_limit=err.need) == want
    assert len(table) == 0 and table.arena_len == 0 and spans > 0


# ---------------------------------------------------------------- arguments


def test_a_huge_thread_count_is_clamped_in_both_stages():
    text = corpus("en_austen.txt")[:60_000]
    want = _core_train(text, 1_500, 1_000)
    assert _core_train(text, 1_500, 1_000, num_threads=10**30).merges == want.merges
    with pytest.raises(TrainingError, match="num_threads"):
        _core_train(text, 1_500, 1_000, num_threads=0)


def test_transition_sizes():
    assert transition_size(0.5, 1000) == 500
    assert transition_size(600, 1000) == 600
    for bad in (100, 2000, 0.0, 1.5, True, "x"):
        with pytest.raises(TrainingError, match="superword"):
            transition_size(bad, 1000)


def test_bad_arguments():
    with pytest.raises(TrainingError, match="one-shot iterator"):
        bytepair.train(iter(["a b c"]), 300, superword=280)
    with pytest.raises(TrainingError, match="max_words"):
        bytepair.train("a b c", 300, superword=280, max_words=0)
    with pytest.raises(TypeError, match="span_counts"):
        bytepair.train(counts=bytepair.counts.ChunkCounts({b"a": 1}), vocab_size=300, superword=280)
    with pytest.raises(TypeError, match="span_counts= is for superword"):
        bytepair.train(counts=bytepair.counts.ChunkCounts({b"a": 1}), vocab_size=300,
                       span_counts=bytepair.counts.ChunkCounts({b"a": 1}))
