"""The two merge loops of the core against the reference: the compact loop
(chunk ids over a flat symbol array, taken when chunks are short) and the
position loop (linked byte positions, taken for long chunks), forced one by
one on the same tables; which loop a table takes; and the memory estimate
that follows the choice."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import _core, reference
from bytepair import memory as _memory
from bytepair.counts import ChunkCounts
from bytepair.errors import TrainingError
from conftest import CORPORA

LOOPS = ["compact", "positions"]


def table_of(texts, pattern):
    return ChunkCounts.from_texts(texts, pattern=pattern).table


def core(table, k, loop, **kw):
    return [tuple(m) for m in _core.learn_merges(table, k, merge_loop=loop, **kw)]


def ref(texts, pattern, k, **kw):
    counts = reference.count_chunks(texts, bytepair.patterns.resolve(pattern))
    return [tuple(m) for m in reference.train_from_counts(counts, k, **kw)]


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("pattern", ["gpt2", "o200k", None])
def test_real_text_matches_reference(corpora, loop, pattern):
    texts = [corpora[n][:4000] for n in CORPORA]
    if pattern is None:
        # one chunk per line: long enough chunks for real merges, short enough for both loops
        texts = [line for t in texts for line in t.splitlines() if line]
    table = table_of(texts, pattern)
    assert core(table, 150, loop) == ref(texts, pattern, 150)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(alphabet="aab c\n가", max_size=50), min_size=1, max_size=5),
       pattern=st.sampled_from(["gpt2", None]), k=st.integers(1, 40),
       min_frequency=st.integers(1, 3), max_len=st.one_of(st.none(), st.integers(2, 5)))
def test_both_loops_equal_reference_on_ties(texts, pattern, k, min_frequency, max_len):
    if not any(texts):
        return
    kw = {"min_frequency": min_frequency, "max_token_length": max_len}
    want = ref(texts, pattern, k, **kw)
    table = table_of(texts, pattern)
    for loop in LOOPS:
        assert core(table, k, loop, **kw) == want, loop


def test_short_chunks_take_the_compact_loop_and_long_ones_the_position_loop():
    assert table_of(["the cat sat on the mat"], "gpt2").merge_loop(1000) == "compact"
    long = table_of(["ab" * 5000], None)
    # the bound of the compact loop's work is L * min(L, merges) per chunk
    assert long.merge_loop(4000) == "compact"
    assert long.merge_loop(5000) == "positions"
    with pytest.raises(ValueError, match="short chunks"):
        _core.learn_merges(long, 5000, merge_loop="compact")
    with pytest.raises(ValueError, match="'auto', 'compact' or 'positions'"):
        _core.learn_merges(long, 3, merge_loop="fast")
    # the long chunk still trains, through the position loop
    assert core(long, 5000, "auto") == ref(["ab" * 5000], None, 5000)


def test_more_merges_than_sixteen_bit_symbols_hold():
    # past 65,280 merges the compact loop stores 32-bit symbols
    text = bytes(range(256)).decode("latin-1") * 3
    words = [text[i:i + 9] for i in range(len(text) - 9)] * 2
    table = ChunkCounts.from_texts([" ".join(f"{w}{i}" for i, w in enumerate(words * 60))], pattern=None).table
    assert table.merge_loop(70_000) == "positions"  # a single long chunk
    docs = [f"{w}{i}" for i, w in enumerate(words * 60)]
    table = ChunkCounts.from_texts(docs, pattern=None).table
    assert table.merge_loop(70_000) == "compact"
    a = core(table, 70_000, "compact")
    assert len(a) > 65_280
    assert a == core(table, 70_000, "positions")


def test_memory_estimate_follows_the_loop():
    # 150,000 distinct short words: the compact loop's estimate fits the
    # smallest limit, the position loop's would not
    words = [f"w{i}" for i in range(150_000)]
    table = table_of([" ".join(words)], "gpt2")
    assert table.merge_loop(300) == "compact"
    args = (len(table), table.arena_len, 300)
    assert _memory.merge_loop_bytes(*args) <= _memory.MIN_LIMIT < _memory.merge_loop_bytes(*args, compact=False)
    tok = bytepair.train([" ".join(words)], 556, pattern="gpt2", memory_limit=_memory.MIN_LIMIT, progress=False)
    assert len(tok.merges) == 300
    # one long chunk of as many bytes, with enough merges to pass the work bound,
    # takes the position loop and is refused under that limit
    with pytest.raises(TrainingError, match="the merge loop needs about"):
        bytepair.train(["ab" * 500_000], 5256, pattern=None, memory_limit=_memory.MIN_LIMIT, progress=False)


def test_under_a_limit_only_the_compact_loop_fits_it_runs_to_the_end(monkeypatch):
    # one long chunk of digits: by default the compact loop would hand over
    # to the position loop, which needs more than the limit; training keeps
    # the compact loop to the end and learns the same merges
    rng = random.Random(3)
    digits = "".join(rng.choice("0123456789") for _ in range(1_200_000))
    table = table_of([digits], None)
    args = (len(table), table.arena_len, 200)
    assert _memory.merge_loop_bytes(*args) <= _memory.MIN_LIMIT < _memory.merge_loop_bytes(*args, compact=False)
    loops = []
    learn = _core.learn_merges

    def spy(*a, **kw):
        loops.append(kw.get("merge_loop"))
        return learn(*a, **kw)

    monkeypatch.setattr(_core, "learn_merges", spy)
    limited = bytepair.train([digits], 456, pattern=None, memory_limit=_memory.MIN_LIMIT, progress=False)
    unlimited = bytepair.train([digits], 456, pattern=None, progress=False)
    assert loops == ["compact", "auto"]
    assert limited.merges == unlimited.merges
