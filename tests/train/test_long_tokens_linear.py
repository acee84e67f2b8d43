"""A vocabulary with very long tokens (training on one long run of a letter
builds tokens as long as the run) is built in time linear in its bytes: the
pair table tries only cuts whose sides have lengths some token has."""

from __future__ import annotations

import time
import warnings

import bytepair
from bytepair import _core


def _build_time(n: int) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run supports only a few dozen merges
        tokens = bytepair.train("一" * n, 2256, pattern="gpt2", progress=False, max_token_length=None).token_bytes_list
    assert max(map(len, tokens)) == 3 * n  # one token is the whole run
    best = float("inf")
    for _ in range(3):
        t = time.process_time()
        _core.CoreBPE(tokens, {}, "gpt2")
        best = min(best, time.process_time() - t)
    return best


def test_vocabulary_with_long_tokens_builds_in_linear_time():
    # 60 KB and 240 KB tokens: linear gives 4, quadratic 16
    small, big = _build_time(20_000), _build_time(80_000)
    assert big / max(small, 0.01) < 8, (small, big)
