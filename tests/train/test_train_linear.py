"""Training time grows linearly with hostile input: one long chunk of random
digits (a single GPT-2 piece) that many merges touch. The compact loop
rescans a chunk per merge that touches it: run to the end, the choice of loop
bounds its work at a fixed number of symbol visits per chunk byte; by default
it hands over to the position loop once its work passes a budget. The
position loop costs the occurrences merged."""

from __future__ import annotations

import random
import time

import pytest

from bytepair import _core
from bytepair.counts import ChunkCounts


def _digits(n: int) -> str:
    rng = random.Random(7)
    return "".join(rng.choice("0123456789") for _ in range(n))


def _train_time(n: int, merges: int, loop: str, repeats: int = 5) -> float:
    table = ChunkCounts.from_texts([_digits(n)], pattern="gpt2").table
    assert len(table) == 1  # one piece
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        got = _core.learn_merges(table, merges, merge_loop=loop)
        best = min(best, time.process_time() - t)
    assert len(got) == merges
    return best


@pytest.mark.parametrize("loop", ["auto", "positions"])
def test_one_long_digit_run_trains_in_linear_time(loop):
    # 1,500 merges on 100,000 and 400,000 digits: linear gives 4, quadratic 16
    small, big = _train_time(100_000, 1500, loop), _train_time(400_000, 1500, loop)
    assert big / max(small, 0.005) < 8, (small, big)


def test_the_compact_loop_run_to_the_end_is_linear_in_the_chunk():
    # 300 merges touch the chunk at most 300 times: 20,000 and 80,000 digits
    small, big = _train_time(20_000, 300, "compact"), _train_time(80_000, 300, "compact")
    assert big / max(small, 0.005) < 8, (small, big)


def test_by_default_the_compact_loop_hands_over_on_a_long_run():
    # 4,000 merges on 400,000 digits: run to the end, the compact loop scans
    # the chunk about 4,000 times; the default hands over to the position
    # loop after a fixed number of scans (about 8 times faster here)
    auto = _train_time(400_000, 4000, "auto")
    to_the_end = _train_time(400_000, 4000, "compact", repeats=1)
    assert auto < to_the_end / 3, (auto, to_the_end)


def test_the_choice_bounds_the_compact_loops_work():
    table = ChunkCounts.from_texts([_digits(160_000)], pattern="gpt2").table
    # 160,000 * min(160,000, merges) visits against 4,096 per byte
    assert table.merge_loop(4096) == "compact"
    assert table.merge_loop(4097) == "positions"
