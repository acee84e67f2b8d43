"""The piece cache: bounded by its byte budget, wiped back to the vocabulary
seed when full, and never a source of different ids (compared with tiktoken
built from the bundled ranks, before and after wipes)."""

from __future__ import annotations

import pytest

import bytepair
from bytepair import _core
from conftest import CORPORA, ENCODINGS, corpus, tiktoken_encoding


@pytest.fixture
def budget():
    """Restores the process-wide budget after a test changes it."""
    old = _core.piece_cache_budget()
    yield
    _core.set_piece_cache_budget(old)


@pytest.mark.parametrize("name", ENCODINGS)
def test_small_budget_bounds_the_cache_and_keeps_ids(name, budget):
    enc = bytepair.get_encoding(name)
    tt = tiktoken_encoding(name)
    enc.encode_ordinary("warm up")  # this thread's cache exists: its table size is known
    table = enc._core.piece_cache_stats()["table_bytes"]
    _core.set_piece_cache_budget(table + 16 * 1024)
    wipes = enc._core.piece_cache_stats()["wipes"]
    for _ in range(2):  # second round: the same text after wipes
        for c in CORPORA:
            text = corpus(c)
            assert enc.encode_ordinary(text) == tt.encode_ordinary(text), c
            stats = enc._core.piece_cache_stats()
            assert stats["bytes"] <= stats["budget"], stats
            assert stats["entries"] >= stats["seed_entries"] > 0
    assert enc._core.piece_cache_stats()["wipes"] > wipes  # the budget made it wipe


def test_budget_below_the_seed_keeps_the_seed_only(budget):
    enc = bytepair.get_encoding("cl100k_base")
    tt = tiktoken_encoding("cl100k_base")
    _core.set_piece_cache_budget(1)
    text = corpus("ko_prose.txt")
    assert enc.encode_ordinary(text) == tt.encode_ordinary(text)
    stats = enc._core.piece_cache_stats()
    assert stats["entries"] == stats["seed_entries"]  # nothing added beyond the seed
    assert stats["bytes"] == stats["table_bytes"]


def test_default_budget_and_bad_budget():
    assert _core.piece_cache_budget() >= 1
    with pytest.raises(ValueError, match="at least 1"):
        _core.set_piece_cache_budget(0)


def test_cleared_caches_give_the_same_ids():
    enc = bytepair.get_encoding("o200k_base")
    text = corpus("multi_unicode.txt")
    warm = enc.encode_ordinary(text)
    _core.clear_piece_cache()
    assert enc.encode_ordinary(text) == warm
    assert enc.encode_ordinary(text) == tiktoken_encoding("o200k_base").encode_ordinary(text)


def test_table_doubles_within_the_budget_then_wipes(budget):
    """A table that fills up doubles while table + arenas fit the budget (gpt2's
    seed-sized 4 MiB table grows), then the cache is wiped back to the seed's
    size; ids stay tiktoken's throughout."""
    import random
    import string

    enc = bytepair.get_encoding("gpt2")
    tt = tiktoken_encoding("gpt2")
    enc.encode_ordinary("warm up")
    first = enc._core.piece_cache_stats()["table_bytes"]
    _core.set_piece_cache_budget(4 * first + (16 << 20))  # two doublings fit, a third does not
    _core.clear_piece_cache()
    enc.encode_ordinary("warm up")  # the clear's own wipe happens here
    wipes = enc._core.piece_cache_stats()["wipes"]
    rng = random.Random(7)
    letters = string.ascii_lowercase
    sizes = []
    for _ in range(8):  # 480,000 distinct new pieces in all: more than the grown table holds
        text = "".join(" " + "".join(rng.choices(letters, k=rng.randint(5, 9))) for _ in range(60_000))
        # one thread: the cache measured is this thread's
        assert enc.encode_ordinary(text, num_threads=1) == tt.encode_ordinary(text)
        stats = enc._core.piece_cache_stats()
        assert stats["bytes"] <= stats["budget"], stats
        sizes.append(stats["table_bytes"])
    assert max(sizes) == 4 * first, sizes
    assert all(s in (first, 2 * first, 4 * first) for s in sizes), sizes
    assert enc._core.piece_cache_stats()["wipes"] > wipes  # full at 4x: wiped, not grown further
