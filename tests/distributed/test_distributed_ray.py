"""bytepair.distributed on Ray: a local Ray with 2 CPUs (real worker processes),
exactness against one machine, a killed worker, resume, bad shards.

Skipped when Ray is not installed; CI installs it (``pip install "ray[default]"``).
One Ray is started for the whole module (``ray.init`` takes 5-20 s on a busy
2-core machine).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path

import pytest
from test_distributed_local import (
    SPECIALS,
    core_pool_size,
    expected_ids,
    failing_reader,
    kill_once_reader,
    logging_reader,
    make_shards,
    outputs_state,
    read_bin,
    reads,
    real_documents,
)
from test_distributed_memory import LIMIT, many_word_shards, spills_alone
from test_superword_counts import PREFIX, on_counts, one_machine

import bytepair
import bytepair.distributed.count
from bytepair.counts import ChunkCounts
from bytepair.distributed import (
    EngineError,
    ShardsFailedError,
    count_chunks,
    encode_dataset,
    iter_documents,
    read_manifest,
)
from conftest import optional

ray = optional("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def engine():
    if ray.is_initialized():  # pragma: no cover - another module left one running
        ray.shutdown()
    # Workers must import bytepair, this folder's helpers and tests/conftest.py by name.
    here = Path(__file__).parent
    paths = [str(here), str(here.parent), str(Path(bytepair.__file__).parent.parent)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    kwargs = dict(
        num_cpus=2,
        include_dashboard=False,
        logging_level="ERROR",
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join(paths)}},
    )
    try:
        ray.init(**kwargs)
    except Exception:  # noqa: BLE001 - Ray's start-up can time out on an overloaded machine
        ray.shutdown()
        ray.init(**kwargs)
    yield "ray"  # count_chunks/encode_dataset find the running Ray
    ray.shutdown()


def test_ray_count_equals_one_machine_and_trains_the_same(engine, tmp_path, monkeypatch):
    seed = 424242
    print("seed", seed)
    paths, docs = make_shards(tmp_path, 8, seed)
    want = ChunkCounts.from_texts(docs, pattern="o200k", special_tokens=SPECIALS)
    got = count_chunks(paths, special_tokens=SPECIALS, engine=engine, reduce="driver")
    assert list(got.items()) == list(want.items()) and got == want
    # merged by Ray tasks, 3 adjacent tables per task: two levels, a ragged end
    monkeypatch.setattr(bytepair.distributed.count, "TREE_FAN_IN", 3)
    got = count_chunks(paths, special_tokens=SPECIALS, engine=engine, reduce="tree")
    assert list(got.items()) == list(want.items())
    tok = bytepair.train(counts=got, vocab_size=275, special_tokens=SPECIALS)
    one = bytepair.train(docs, vocab_size=275, pattern="o200k", special_tokens=SPECIALS)
    assert tok == one and tok.merges == one.merges


def test_ray_counts_train_a_superword_tokenizer_like_the_documents(engine, tmp_path):
    """Words and spans counted by Ray tasks (merged by Ray tasks and on the
    driver) train to the merges of training on the documents."""
    paths, docs = make_shards(tmp_path, 6, seed=7, docs=real_documents()[:PREFIX])
    want = one_machine(docs, 3000, 0.6, max_words=3)
    words = count_chunks(paths, special_tokens=SPECIALS, engine=engine)
    for reduce in ("tree", "driver"):
        spans = count_chunks(paths, pattern="superword", special_tokens=SPECIALS, engine=engine, reduce=reduce)
        assert on_counts(words, spans, 3000, 0.6, max_words=3).merges == want.merges, reduce


def test_ray_count_under_a_memory_limit_trains_the_same(engine, tmp_path):
    paths, docs = many_word_shards(tmp_path, 8675309)
    # a Ray task counts on one thread: under this limit one shard alone spills
    assert spills_alone(list(iter_documents(paths[0])), threads=1) > 0
    want = ChunkCounts.from_texts(docs, pattern="o200k", special_tokens=SPECIALS)
    for reduce in ("tree", "driver"):
        got = count_chunks(paths, special_tokens=SPECIALS, engine=engine, reduce=reduce, memory_limit=LIMIT)
        assert list(got.items()) == list(want.items()), reduce
    free = count_chunks(paths, special_tokens=SPECIALS, engine=engine)
    assert list(free.items()) == list(want.items())
    tok = bytepair.train(counts=got, vocab_size=400, special_tokens=SPECIALS)
    assert tok.merges == bytepair.train(counts=free, vocab_size=400, special_tokens=SPECIALS).merges


@pytest.mark.parametrize("fmt", ["bin", "parquet"])
def test_ray_encode_equals_encode_batch(engine, tmp_path, fmt):
    paths, _ = make_shards(tmp_path / "in", 5, seed=99)
    tok = bytepair.get_encoding("o200k_base")
    m = encode_dataset(paths, tmp_path / "out", tokenizer=tok, engine=engine, format=fmt)
    assert m["dtype"] == "uint32" and len(m["shards"]) == 5
    for p, s in zip(paths, m["shards"]):
        docs = list(iter_documents(p))
        out = tmp_path / "out" / s["output"]
        if fmt == "bin":
            got = read_bin(out, "uint32")
        else:
            import pyarrow.parquet as pq

            got = [i for row in pq.read_table(out).column("tokens").to_pylist() for i in row]
        assert got == expected_ids(tok, docs)


def test_ray_trained_tokenizer_travels(engine, tmp_path):
    paths, docs = make_shards(tmp_path / "in", 3, seed=5)
    tok = bytepair.train(docs[:30], vocab_size=270, pattern="cl100k", special_tokens=SPECIALS)
    m = encode_dataset(paths, tmp_path / "out", tokenizer=tok, engine=engine)
    assert m["dtype"] == "uint16"
    for p, s in zip(paths, m["shards"]):
        assert read_bin(tmp_path / "out" / s["output"], "uint16") == expected_ids(
            tok, list(iter_documents(p))
        )


def test_ray_killed_worker_still_identical(engine, tmp_path):
    paths, docs = make_shards(tmp_path / "in", 4, seed=31)
    (tmp_path / "m").mkdir()
    got = count_chunks(
        paths,
        engine=engine,
        reader=functools.partial(kill_once_reader, str(tmp_path / "m"), paths[2].name),
    )
    assert (tmp_path / "m" / f"killed-{paths[2].name}").exists()  # the task's process really died
    assert got == ChunkCounts.from_texts(docs, pattern="o200k")

    ref = encode_dataset(paths, tmp_path / "ref", tokenizer="gpt2", engine=engine)
    m = encode_dataset(
        paths,
        tmp_path / "out",
        tokenizer="gpt2",
        engine=engine,
        reader=functools.partial(kill_once_reader, str(tmp_path / "m"), paths[1].name),
    )
    assert (tmp_path / "m" / f"killed-{paths[1].name}").exists()
    key = [(s["output"], s["documents"], s["tokens"]) for s in ref["shards"]]
    assert [(s["output"], s["documents"], s["tokens"]) for s in m["shards"]] == key
    for s in ref["shards"]:
        assert (tmp_path / "out" / s["output"]).read_bytes() == (
            tmp_path / "ref" / s["output"]
        ).read_bytes()


def test_ray_resume_and_bad_shards(engine, tmp_path):
    paths, _ = make_shards(tmp_path / "in", 5, seed=8)
    bad = tmp_path / "in" / "latin1.txt"
    bad.write_bytes("na\xefve".encode("latin-1"))
    out, log = tmp_path / "out", tmp_path / "log"
    log.mkdir()
    with pytest.raises(ShardsFailedError) as ei:
        encode_dataset(
            paths + [bad],
            out,
            tokenizer="gpt2",
            engine=engine,
            reader=functools.partial(failing_reader, (paths[3].name,)),
        )
    assert list(ei.value.failures) == [str(paths[3]), str(bad)]
    assert "not UTF-8" in ei.value.failures[str(bad)]
    before = outputs_state(out)
    assert len(before) == 4 == len(read_manifest(out)["shards"])
    m = encode_dataset(
        paths,
        out,
        tokenizer="gpt2",
        engine=engine,
        reader=functools.partial(logging_reader, str(log)),
    )
    assert reads(log) == [paths[3].name.split(".")[0]]
    assert {k: v for k, v in outputs_state(out).items() if k in before} == before
    assert len(m["shards"]) == 5


def test_ray_task_counts_on_one_thread(engine):
    from bytepair.distributed.engines import RayEngine

    eng = RayEngine()
    got = [o.value for _, o in eng.run(core_pool_size, [(0,), (1,)], ordered=True)]
    assert got == [1, 1]


def assigned_memory(_shared, _i):
    """A task body: the memory Ray reserved for this task (None: none)."""
    return ray.get_runtime_context().get_assigned_resources().get("memory")


def listed(*values):
    """Joins tree_reduce's values into one flat list."""
    return [v for x in values for v in (x if isinstance(x, list) else [x])]


def test_ray_tasks_reserve_the_memory_limit(engine, tmp_path, monkeypatch):
    from bytepair.distributed.engines import RayEngine

    eng = RayEngine()
    got = [o.value for _, o in eng.run(assigned_memory, [(0,), (1,)], ordered=True, memory=16_000_000)]
    assert got == [16_000_000, 16_000_000]
    assert [o.value for _, o in eng.run(assigned_memory, [(0,)], ordered=True)] == [None]
    value, failures = eng.tree_reduce(assigned_memory, [(0,), (1,), (2,)], listed, memory=8_000_000)
    assert failures == {} and value == [8_000_000] * 3
    # more than any node offers: refused at once, not left waiting
    with pytest.raises(EngineError, match="more than any Ray node offers"):
        list(eng.run(assigned_memory, [(0,)], memory=10**15))
    # count_chunks hands its limit to the engine, on both reduce paths
    seen = []
    for method in ("run", "tree_reduce"):
        real = getattr(RayEngine, method)

        def spy(self, *a, _real=real, **kw):
            seen.append(kw.get("memory"))
            return _real(self, *a, **kw)

        monkeypatch.setattr(RayEngine, method, spy)
    paths, _ = make_shards(tmp_path, 2, 5)
    for reduce in ("driver", "tree"):
        count_chunks(paths, special_tokens=SPECIALS, engine=engine, reduce=reduce, memory_limit="64MB")
    assert seen == [64_000_000, 64_000_000]


def slow_unless_first(shared, i):
    """A task body: task 0 returns at once; the others run for up to a minute,
    noting in folder ``shared`` that they started and that they unwound. The
    note of the start is inside the ``try``: the stop flag's interrupt can land
    on any line, and one landing right after the note must still unwind."""
    if i == 0:
        return i
    folder = Path(shared)
    try:
        (folder / f"started-{i}").touch()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.01)
        return i
    finally:
        (folder / f"unwound-{i}").touch()


@pytest.mark.parametrize("method", ["run", "tree_reduce"])
def test_ray_abandoned_tasks_unwind_without_ray_cancel(engine, tmp_path, monkeypatch, method):
    """Tasks the driver abandons (here: the consumer stops early, or a map task
    fails) stop through their run's stop flag, not `ray.cancel` (Ray's task
    submitter can abort the driver when a cancel meets a finishing task): each
    unwinds (its `finally` runs) within a second or so, a task that had not
    started yet stops at once, and the flag is removed from Ray's store."""
    from ray.experimental import internal_kv

    from bytepair.distributed.engines import RayEngine
    from bytepair.distributed.engines import ray as ray_engine

    cancels = []
    monkeypatch.setattr(ray, "cancel", lambda ref, **kw: cancels.append(kw))
    eng = RayEngine()
    arglist = [(i,) for i in range(5)]  # 2 CPUs: some tasks wait for a free one
    t0 = []

    def give_up():  # once a slow task runs
        while not list(tmp_path.glob("started-*")):
            time.sleep(0.05)
        t0.append(time.monotonic())
        raise RuntimeError("the consumer gives up")

    if method == "run":
        results = eng.run(slow_unless_first, arglist, shared=str(tmp_path))
        with pytest.raises(RuntimeError, match="gives up"), contextlib.closing(results):
            for _ in results:
                give_up()
    else:
        with pytest.raises(RuntimeError, match="gives up"):
            eng.tree_reduce(slow_unless_first, arglist, listed, shared=str(tmp_path), on_done=give_up)
    secs = time.monotonic() - t0[0]
    assert cancels == []
    assert secs < ray_engine.CANCEL_GRACE / 2, f"took {secs:.1f} s"
    # every task that noted its start unwinds (one the interrupt met before its
    # note unwinds too); a task may still be starting as the consumer gives up
    def noted(what):
        return {x.name.split("-")[1] for x in tmp_path.glob(f"{what}-*")}

    deadline = time.monotonic() + ray_engine.CANCEL_GRACE / 2
    while not noted("started") <= noted("unwound") and time.monotonic() < deadline:
        time.sleep(0.05)
    started = noted("started")
    assert started and started <= noted("unwound"), (started, noted("unwound"))
    assert internal_kv._internal_kv_list("stop-", namespace=ray_engine.STOP_NAMESPACE) == []


def deaf_unless_first(shared, i):
    """A task body: task 0 returns at once; the others note in folder ``shared``
    that they started, then ignore interrupts for 3 s. The deadline check is
    inside the ``try`` too: an interrupt that lands between two sleeps must not
    end the task either."""
    if i:
        (Path(shared) / f"started-{i}").touch()
    deadline = time.monotonic() + (0 if i == 0 else 3)
    while True:
        try:
            if time.monotonic() >= deadline:
                return i
            time.sleep(0.01)
        except KeyboardInterrupt:
            pass


def test_ray_tasks_deaf_to_the_stop_flag_are_force_cancelled_after_the_grace(engine, monkeypatch, tmp_path):
    """On a cluster this program did not start, a task still running when the
    grace ends is force-cancelled (the last resort); the others were not."""
    from bytepair.distributed.engines import RayEngine
    from bytepair.distributed.engines import ray as ray_engine

    cancels = []
    monkeypatch.setattr(ray, "cancel", lambda ref, **kw: cancels.append(kw))
    monkeypatch.setattr(ray_engine, "CANCEL_GRACE", 0.5)
    results = RayEngine().run(deaf_unless_first, [(0,), (1,)], shared=str(tmp_path))
    with contextlib.closing(results):
        assert next(results)[0] == 0
        # closed once task 1 runs (a task that has not started stops at once)
        deadline = time.monotonic() + 60
        while not (tmp_path / "started-1").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert cancels == [{"force": True}]
