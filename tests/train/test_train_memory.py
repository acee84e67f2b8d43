"""Training under a memory limit: strict size parsing, counting spilled to
sorted runs on disk with identical results, the merge loop's need checked
before merging."""

from __future__ import annotations

import random

import pytest

import bytepair
from bytepair import _core
from bytepair.counts import ChunkCounts, count_chunks
from bytepair.errors import TrainingError
from bytepair.memory import merge_loop_bytes, parse_size


def _many_words(seed: int, n: int) -> str:
    rng = random.Random(seed)
    print("seed", seed)
    letters = "abcdefghijklmnopqrstuvwxyzéü한국"
    words = ["".join(rng.choice(letters) for _ in range(rng.randrange(2, 12))) for _ in range(n)]
    return " ".join(words + words[: n // 3])


@pytest.mark.parametrize("bad", ["2XB", "", "GB", "-1GB", "1e9", "12 M B", 15_999_999, 10**16, True, 2.5])
def test_bad_sizes_are_refused(bad):
    with pytest.raises(TrainingError, match="memory_limit"):
        parse_size(bad)


def test_sizes():
    assert parse_size("128MB") == 128_000_000
    assert parse_size("1.5GiB") == 3 << 29
    assert parse_size(" 2 gb ") == 2_000_000_000


def test_spilled_counting_equals_counting_in_memory(tmp_path):
    text = _many_words(7, 150_000)
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    for threads in [1, 2]:
        c = _core.ChunkCounter("o200k", [], None, threads, memory_limit=1 << 20, spill_dir=tmp_path)
        c.feed_file(str(path))
        c.feed_texts([text[:100_000]])
        assert c.spilled_runs > 2
        got = ChunkCounts.from_table(c.finish(), bytepair.patterns.resolve("o200k"), [])
        want = ChunkCounts.from_texts([text, text[:100_000]], pattern="o200k", num_threads=1)
        assert list(got.items()) == list(want.items())
    assert list(tmp_path.iterdir()) == [path]  # the run files are gone


def test_training_under_a_small_limit_gives_the_same_merges(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text(_many_words(11, 80_000), encoding="utf-8")
    free = bytepair.train([path], 1500, pattern="gpt2")
    # 40 MB with 2 threads leaves the counting tables 5 MB: they spill, the merge loop fits
    small = bytepair.train([path], 1500, pattern="gpt2", memory_limit="40MB", num_threads=2)
    assert small.merges == free.merges


def test_merge_loop_that_cannot_fit_is_refused_before_merging(tmp_path):
    counts = count_chunks(_many_words(3, 200_000), pattern="gpt2")
    need = merge_loop_bytes(len(counts), counts.table.arena_len, 1000)
    assert need > 16_000_000
    with pytest.raises(TrainingError, match=r"merge loop needs about [\d,]+ MB") as ei:
        bytepair.train(counts=counts, vocab_size=1256, memory_limit=16_000_000)
    assert "memory_limit (16 MB)" in str(ei.value)
