"""The budget functions (chunk_text, count with a limit, truncate_text) on long
texts: work grows linearly with the text, and ``count(limit=)`` costs what the
tokens up to the limit cost, not the text.

Each case runs in a child process on texts of two sizes and compares the
child's CPU time (user and system: buffers allocated and zeroed per call show
up as system time); a wall-clock limit makes a quadratic case fail instead of
hanging the run.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import bytepair

BUDGET_S = 240.0

# Random Latin and Hangul words, 15 to a line: Hangul makes CPython keep the
# str as UCS-2, the case where the core converts the text to UTF-8 itself.
CHILD = textwrap.dedent(
    """
    import json, random, sys, time
    import bytepair

    def words(n_chars, seed):
        r = random.Random(seed)
        latin = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
        vocab = ["".join(r.choice(latin) for _ in range(r.randint(2, 9))) for _ in range(3000)]
        vocab += ["".join(chr(r.randint(0xAC00, 0xD7A3)) for _ in range(r.randint(1, 4))) for _ in range(3000)]
        line = 15 * 6
        lines = [" ".join(r.choices(vocab, k=15)) for _ in range(n_chars // line + 1)]
        return "\\n".join(lines)[:n_chars]

    enc = bytepair.get_encoding("o200k_base")
    sizes, reps = [int(x) for x in sys.argv[1].split(",")], int(sys.argv[2])
    run = eval(sys.argv[3])
    enc.count("warm up")
    flush = bytearray(64 << 20)
    out = {}
    for size in sizes:
        text = words(size, seed=size)
        best = float("inf")
        for _ in range(reps):
            # a new str object each run: nothing kept from the last call
            fresh = "".join([text[:1], text[1:]])
            # the same cold caches at both sizes (a large str just written
            # has evicted its own head; a small one has not)
            flush[:] = bytes(len(flush))
            t = time.process_time()
            run(enc, fresh)
            best = min(best, time.process_time() - t)
        out[str(size)] = best
    print(json.dumps(out))
    """
)


def _env():
    env = dict(os.environ)
    pkg = Path(bytepair.__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(pkg), env.get("PYTHONPATH", "")])
    return env


def _times(case: str, small: int, big: int, run: str, reps: int = 2) -> tuple[float, float]:
    """The best CPU time of ``run`` over ``reps`` runs on ``small`` and on ``big`` characters."""
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, f"{small},{big}", str(reps), run], capture_output=True,
                              text=True, env=_env(), timeout=BUDGET_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: not done within {BUDGET_S:.0f}s on {small:,} and {big:,} characters")
    assert proc.returncode == 0, proc.stderr[-3000:]
    t = json.loads(proc.stdout)
    return t[str(small)], t[str(big)]


# run(enc, text) for each case; chunking: about 5000 chunks at the larger size,
# which (above 32 MB of UTF-8 buffer) converted the whole text once per chunk
LINEAR = {
    "chunk_text": "lambda enc, t: enc.chunk_text(t, 1000)",
    "chunk_text_overlap_lines": "lambda enc, t: enc.chunk_text(t, 1000, overlap=100, boundary='line')",
    "chunk_text_allowed_special": "lambda enc, t: enc.chunk_text(t.replace(chr(10), '<|endoftext|>', 2000), 1000,"
                                  " allowed_special='all')",
    "truncate_text": "lambda enc, t: enc.truncate_text(t, 10**6)",
    "count_limit_not_reached": "lambda enc, t: enc.count(t, limit=10**9)",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(LINEAR))
def test_budget_functions_take_linear_time(case):
    # 3M and 12M characters (9 and 36 MB of UTF-8 buffer): linear gives 4,
    # quadratic 16; 8 leaves a factor 2 for a loaded machine
    small, big = _times(case, 3_000_000, 12_000_000, LINEAR[case])
    assert big / max(small, 1e-3) < 8.0, f"{case}: {small:.2f}s on 3M characters, {big:.2f}s on 12M"


@pytest.mark.slow
def test_count_with_a_binding_limit_does_not_read_the_whole_text():
    # 100 tokens of a new str of 1M and of 16M characters: the same work (a
    # conversion of the whole str, or a pass over it, gives a ratio near 16)
    small, big = _times("count_limit", 1_000_000, 16_000_000, "lambda enc, t: enc.count(t, limit=100)", reps=9)
    assert big / max(small, 2e-5) < 4.0, f"count(limit=100): {small * 1e6:.0f}us on 1M characters, " \
                                         f"{big * 1e6:.0f}us on 16M"


@pytest.mark.slow
def test_chunking_text_without_restart_points_is_linear():
    # CJK without spaces or punctuation is one pre-token segment: each chunk's
    # search ends within max_tokens x the longest token, not at the text's end
    run = "lambda enc, t: enc.chunk_text('一二三四五六七八九十' * (len(t) // 10), 50)"
    small, big = _times("chunk_cjk", 8_000, 32_000, run, reps=1)
    assert big / max(small, 1e-2) < 8.0, f"chunk_text on CJK: {small:.2f}s on 8K characters, {big:.2f}s on 32K"


@pytest.mark.slow
def test_chunking_random_cjk_costs_a_bounded_multiple_of_counting():
    # Random CJK (no restart point, few repeats) under o200k_base: each chunk's
    # search once filled a tiling table and encoded its whole window of
    # max_tokens x the longest token's bytes (about 3,000 times the cost of
    # counting the text); now it stops past the chunk's end (30-50 times)
    enc = bytepair.get_encoding("o200k_base")
    r = random.Random(11)
    text = "".join(chr(r.randint(0x4E00, 0x9FFF)) for _ in range(64_000))

    def cpu(f, reps):
        best = float("inf")
        for _ in range(reps):
            t = time.process_time()
            f()
            best = min(best, time.process_time() - t)
        return best

    count = max(cpu(lambda: enc.count(text), 5), 1e-3)
    chunk = cpu(lambda: enc.chunk_text(text, 100), 1)
    assert chunk / count < 300, f"chunk_text {chunk * 1e3:.0f} ms, count {count * 1e3:.1f} ms"
