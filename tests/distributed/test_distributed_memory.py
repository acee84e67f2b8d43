"""``count_chunks(memory_limit=...)``: each task counts its shard under the
limit on the threads its engine gave it, spilling to disk past it, and the
counts (so the merges) equal counting without a limit on one machine. The Ray
twin is in test_distributed_ray.py and imports the helpers below."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any, ClassVar, List, Tuple

import pytest
from test_distributed_local import SPECIALS, write_shard

import bytepair
from bytepair import _core
from bytepair.counts import ChunkCounts
from bytepair.distributed import count_chunks, iter_documents
from bytepair.distributed.engines import Engine, call_task
from bytepair.errors import TrainingError
from bytepair.memory import counting_share
from conftest import run_cli as run

#: The core's counter (the tests below put a watched one in its place).
REAL_COUNTER = _core.ChunkCounter
#: The smallest limit accepted: its counting share (4 MiB) is below one shard's tables.
LIMIT = "16MB"


def many_word_shards(folder: Path, seed: int, n_shards: int = 3,
                     words_per_shard: int = 250_000) -> Tuple[List[Path], List[str]]:
    """JSONL shards of random words, each with enough distinct chunks that its
    counting tables pass the counting share of :data:`LIMIT` (and so spill).
    Returns the paths and their documents in order."""
    print("seed", seed)
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyzé"
    folder.mkdir(parents=True, exist_ok=True)
    paths, docs = [], []
    for k in range(n_shards):
        words = ["".join(rng.choice(letters) for _ in range(rng.randrange(3, 10))) for _ in range(words_per_shard)]
        group = [" ".join(words[i : i + 2000]) + "<|endoftext|>" for i in range(0, len(words), 2000)]
        path = folder / f"part-{k}.jsonl"
        write_shard(path, group)
        paths.append(path)
        docs += group
    return paths, docs


def spills_alone(docs: List[str], threads: int) -> int:
    """Run files written counting ``docs`` on ``threads`` under the counting share of :data:`LIMIT`."""
    share = counting_share(bytepair.memory.parse_size(LIMIT), threads)
    counter = _core.ChunkCounter(bytepair.patterns.resolve("o200k"), SPECIALS, None, threads, memory_limit=share)
    counter.feed_texts(docs)
    runs = counter.spilled_runs
    counter.finish()
    return runs


class InlineEngine(Engine):
    """Runs each task in this process, as an engine's worker would, on ``threads``
    threads (so a test can watch the core calls a task makes)."""

    name = "inline"

    def __init__(self, threads: int) -> None:
        self.threads = threads

    def run(self, fn, arglist, *, shared=None, ordered=False):
        for i, args in enumerate(arglist):
            yield i, call_task(fn, shared, args, self.threads)


class WatchedCounter:
    """A ChunkCounter that records its thread count, its memory limit and the
    runs it spilled before it finished."""

    seen: ClassVar[List[dict]] = []

    def __init__(self, pattern: Any, specials: Any, separator: Any, threads: Any, **kw: Any) -> None:
        self._inner = REAL_COUNTER(pattern, specials, separator, threads, **kw)
        self._record = {"threads": self._inner.num_threads, "memory_limit": kw.get("memory_limit")}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)

    def finish(self) -> Any:
        self._record["spilled_runs"] = self._inner.spilled_runs
        self.seen.append(self._record)
        return self._inner.finish()


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    return many_word_shards(tmp_path_factory.mktemp("shards"), 20240611)


@pytest.fixture(scope="module")
def one_machine(shards):
    return ChunkCounts.from_texts(shards[1], pattern="o200k", special_tokens=SPECIALS)


@pytest.mark.parametrize("threads", [1, 2])
def test_each_task_counts_under_the_limit_on_its_threads(shards, one_machine, monkeypatch, threads):
    paths, _ = shards
    WatchedCounter.seen = []
    monkeypatch.setattr(_core, "ChunkCounter", WatchedCounter)
    got = count_chunks(paths, special_tokens=SPECIALS, engine=InlineEngine(threads), memory_limit=LIMIT)
    share = counting_share(16_000_000, threads)
    assert [(r["threads"], r["memory_limit"]) for r in WatchedCounter.seen] == [(threads, share)] * len(paths)
    assert all(r["spilled_runs"] > 0 for r in WatchedCounter.seen), WatchedCounter.seen
    assert list(got.items()) == list(one_machine.items())
    # without a limit no task spills
    WatchedCounter.seen = []
    count_chunks(paths, special_tokens=SPECIALS, engine=InlineEngine(threads))
    assert [(r["memory_limit"], r["spilled_runs"]) for r in WatchedCounter.seen] == [(None, 0)] * len(paths)


def test_local_workers_under_a_limit_give_identical_counts_and_merges(shards, one_machine):
    paths, _ = shards
    threads = max(1, (os.cpu_count() or 1) // 2)  # each of the 2 workers' share of the cores
    assert spills_alone(list(iter_documents(paths[0])), threads) > 0
    got = count_chunks(paths, special_tokens=SPECIALS, workers=2, memory_limit=LIMIT)
    assert list(got.items()) == list(one_machine.items())
    tok = bytepair.train(counts=got, vocab_size=400, special_tokens=SPECIALS)
    assert tok.merges == bytepair.train(counts=one_machine, vocab_size=400, special_tokens=SPECIALS).merges


@pytest.mark.parametrize("bad", ["2XB", "15MB", 0, True])
def test_a_bad_limit_is_refused_before_any_task_runs(shards, bad, monkeypatch):
    monkeypatch.setattr(bytepair.distributed.count, "get_engine", lambda *a, **k: pytest.fail("an engine started"))
    with pytest.raises(TrainingError, match="memory_limit"):
        count_chunks(shards[0], memory_limit=bad)


def test_cli_count_chunks_takes_memory(shards, one_machine, capsys, tmp_path):
    paths, _ = shards
    out = tmp_path / "counts.bpc"
    code, _, err = run(capsys, "count-chunks", *map(str, paths), "-o", str(out), "--memory", LIMIT,
                            "--workers", "2")
    assert code == 0, err
    assert list(ChunkCounts.load(out).items()) == list(one_machine.items())
    code, _, err = run(capsys, "count-chunks", *map(str, paths), "-o", str(out), "--memory", "lots")
    assert code == 2 and "--memory 'lots' is not a size" in err and len(err.strip().splitlines()) == 1
