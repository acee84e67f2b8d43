"""Training time grows linearly with hostile input: one long chunk of random
digits (a single GPT-2 piece) that many merges touch, in both merge loops.
The compact loop rescans a chunk per merge that touches it, so the choice
between the loops bounds its work at a fixed number of symbol visits per
chunk byte; the position loop costs the occurrences merged."""

from __future__ import annotations

import random
import time

import pytest

from bytepair import _core
from bytepair.counts import ChunkCounts


def _digits(n: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice("0123456789") for _ in range(n))


def _train_time(n: int, merges: int, loop: str) -> float:
    table = ChunkCounts.from_texts([_digits(n)], pattern="gpt2").table
    assert len(table) == 1  # one piece
    best = float("inf")
    for _ in range(2):
        t = time.process_time()
        got = _core.learn_merges(table, merges, merge_loop=loop)
        best = min(best, time.process_time() - t)
    assert len(got) == merges
    return best


@pytest.mark.parametrize("loop", ["auto", "positions"])
def test_one_long_digit_run_trains_in_linear_time(loop):
    # 1,500 merges on 40,000 and 160,000 digits: linear gives 4, quadratic 16
    small, big = _train_time(40_000, 1500, loop), _train_time(160_000, 1500, loop)
    assert big / max(small, 0.005) < 8, (small, big)


def test_the_choice_bounds_the_compact_loops_work():
    table = ChunkCounts.from_texts([_digits(160_000)], pattern="gpt2").table
    # 160,000 * min(160,000, merges) visits against 4,096 per byte
    assert table.merge_loop(4096) == "compact"
    assert table.merge_loop(4097) == "positions"
