"""bytepair.distributed with the local engine (real worker processes): exactness
against one-machine counting, training and ``encode_batch``; killed workers;
resume; bad shards. The Ray twin of these tests is test_distributed_ray.py and
imports the helpers below (workers import them by name, so keep them top-level).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import random
import signal
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import bytepair
from bytepair.counts import ChunkCounts
from bytepair.distributed import (
    EngineUnavailableError,
    OutputDirError,
    ShardsFailedError,
    count_chunks,
    encode_dataset,
    get_engine,
    iter_documents,
    read_manifest,
)
from bytepair.distributed.engines import Engine, Outcome, call_task
from conftest import corpus

SPECIALS = ["<|endoftext|>"]
FORMATS = ["jsonl", "parquet", "txt", "jsonl.gz", "jsonl", "txt.gz"]


# ------------------------------------------------ helpers (also used by the Ray tests)


def real_documents() -> List[str]:
    """Documents of four committed corpora (blank-line separated), in order."""
    docs: List[str] = []
    for name in ["en_austen.txt", "ko_prose.txt", "code_python.txt", "multi_unicode.txt"]:
        docs += [d for d in corpus(name).split("\n\n") if d.strip()]
    return docs


def write_shard(path: Path, docs: List[str]) -> None:
    name = path.name
    if name.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"text": docs, "id": list(range(len(docs)))}), path)
        return
    if ".jsonl" in name:
        raw = "".join(
            json.dumps({"id": i, "text": d}, ensure_ascii=False) + "\n" for i, d in enumerate(docs)
        )
    else:
        assert len(docs) == 1
        raw = docs[0]
    data = raw.encode("utf-8")
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)


def make_shards(
    folder: Path, n_shards: int, seed: int, docs: Optional[List[str]] = None
) -> Tuple[List[Path], List[str]]:
    """Splits real documents into shards of mixed formats at random cut points.
    Returns the paths and the documents they hold, in order (a text shard is one
    document: its group joined by blank lines)."""
    docs = real_documents() if docs is None else docs
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(docs)), n_shards - 1))
    paths, expected = [], []
    folder.mkdir(parents=True, exist_ok=True)
    for k, (a, b) in enumerate(zip([0] + cuts, cuts + [len(docs)])):
        fmt = FORMATS[k % len(FORMATS)]
        group = docs[a:b]
        if fmt.startswith("txt"):
            group = ["\n\n".join(group)]
        path = folder / f"shard-{k:03d}.{fmt}"
        write_shard(path, group)
        paths.append(path)
        expected += group
    return paths, expected


def kill_once_reader(marker_dir: str, victim: str, path: str):
    """Reads a shard; the first time it is asked for ``victim`` it SIGKILLs its own process."""
    if os.path.basename(path) == victim:
        try:
            fd = os.open(
                os.path.join(marker_dir, "killed-" + victim), os.O_CREAT | os.O_EXCL | os.O_WRONLY
            )
        except FileExistsError:
            pass
        else:
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
    return iter_documents(path)


def failing_reader(victims: Tuple[str, ...], path: str):
    """Reads a shard; the shards named in ``victims`` fail every time."""
    if os.path.basename(path) in victims:
        raise ValueError(f"{path}: deterministic test failure")
    return iter_documents(path)


def logging_reader(log_dir: str, path: str):
    """Reads a shard and records that it did (one file per read)."""
    with open(
        os.path.join(log_dir, f"{os.path.basename(path)}.{os.getpid()}.{random.random()}"), "w"
    ):
        pass
    return iter_documents(path)


def reads(log_dir: Path) -> List[str]:
    return sorted(p.name.split(".")[0] for p in log_dir.iterdir())


def expected_ids(tok, docs: List[str], eot: bool = True) -> List[int]:
    out: List[int] = []
    for ids in tok.encode_batch(docs, disallowed_special=()):
        out += ids + ([tok.eot_token] if eot else [])
    return out


def read_bin(path: Path, dtype: str) -> List[int]:
    data = path.read_bytes()
    view = memoryview(data).cast("H" if dtype == "uint16" else "I")
    assert sys.byteorder == "little"
    return list(view)


def outputs_state(out: Path) -> Dict[str, Tuple[int, int]]:
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in out.iterdir()
        if p.name != "manifest.json"
    }


# ---------------------------------------------------------------- readers


def test_readers_one_record_is_one_document(tmp_path):
    docs = ["line one\nline two\n\nafter a blank line", "second\r\ndocument", ""]
    for name in ["d.jsonl", "d.jsonl.gz", "d.parquet"]:
        write_shard(tmp_path / name, docs)
        assert list(iter_documents(tmp_path / name)) == docs, name
    (tmp_path / "bom.jsonl").write_bytes(b'\xef\xbb\xbf{"text": "a"}\r\n{"text": "b"}\r\n')
    assert list(iter_documents(tmp_path / "bom.jsonl")) == ["a", "b"]
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"body": pa.array(["x", "y", "x"]).dictionary_encode()}), tmp_path / "d.pq"
    )
    assert list(iter_documents(tmp_path / "d.pq", text_column="body")) == ["x", "y", "x"]
    (tmp_path / "t.txt").write_text(docs[0], encoding="utf-8")
    assert list(iter_documents(tmp_path / "t.txt")) == [docs[0]]
    assert list(iter_documents(tmp_path / "t.txt", input_format="text")) == [docs[0]]


def test_bad_shards_named_and_others_finish(tmp_path):
    good, _ = make_shards(tmp_path / "good", 3, seed=1)
    bad = {
        "latin1.txt": "caf\xe9".encode("latin-1"),
        "broken.jsonl": b'{"text": "ok"}\n{"text": oops}\n',
        "nocol.jsonl": b'{"body": "x"}\n',
        "damaged.parquet": b"PAR1 this is not parquet",
        "bad.jsonl.gz": b"not gzip at all",
    }
    for name, raw in bad.items():
        (tmp_path / name).write_bytes(raw)
    paths = good[:2] + [tmp_path / n for n in bad] + good[2:] + [tmp_path / "missing.txt"]
    with pytest.raises(ShardsFailedError) as ei:
        count_chunks(paths, workers=2)
    failures = ei.value.failures
    assert set(failures) == {str(tmp_path / n) for n in list(bad) + ["missing.txt"]}
    assert "not UTF-8" in failures[str(tmp_path / "latin1.txt")]
    assert "broken.jsonl:2" in failures[str(tmp_path / "broken.jsonl")]
    assert "'text'" in failures[str(tmp_path / "nocol.jsonl")]
    assert "Parquet" in failures[str(tmp_path / "damaged.parquet")]
    for path in failures:
        assert path in str(ei.value)

    # encoding: the good shards are written and in the manifest, the bad ones listed
    out = tmp_path / "out"
    with pytest.raises(ShardsFailedError) as ei:
        encode_dataset(paths, out, tokenizer="gpt2", workers=2)
    assert set(ei.value.failures) == set(failures)
    written = {s["output"] for s in read_manifest(out)["shards"]}
    assert written == {f"{p.name.split('.')[0]}.bin" for p in good}
    assert ei.value.manifest["shards"] == read_manifest(out)["shards"]


# ---------------------------------------------------------------- counting


def test_count_equals_one_machine_and_trains_the_same(tmp_path):
    seed = 20261130
    paths, docs = make_shards(tmp_path, 9, seed)
    print("seed", seed)
    got = count_chunks(paths, special_tokens=SPECIALS, workers=2)
    want = ChunkCounts.from_texts(docs, pattern="o200k", special_tokens=SPECIALS)
    assert got == want
    assert list(got.items()) == list(want.items())  # order too: the tie-break depends on it
    tok = bytepair.train(counts=got, vocab_size=275, special_tokens=SPECIALS)
    one = bytepair.train(docs, vocab_size=275, pattern="o200k", special_tokens=SPECIALS)
    assert tok == one and tok.merges == one.merges


class ReversedEngine(Engine):
    """Runs tasks in this process and reports them last-first (even when asked
    for input order: the driver must not depend on engines for exactness)."""

    def run(self, fn, arglist, *, shared=None, ordered=False):
        results = [(i, call_task(fn, shared, args)) for i, args in enumerate(arglist)]
        return iter(results[::-1])


def test_merge_order_is_input_order_not_finish_order(tmp_path):
    # Each shard repeats chunks of the previous ones with higher counts, so any
    # merge in completion order would reorder the first-seen table.
    texts = ["b a", "a a c b", "c c c d a", "d d d d e"]
    paths = []
    for i, t in enumerate(texts):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(t)
    got = count_chunks(paths, pattern="gpt2", engine=ReversedEngine())
    assert got == ChunkCounts.from_texts(texts, pattern="gpt2")


def test_killed_worker_is_retried_count(tmp_path):
    paths, docs = make_shards(tmp_path / "in", 5, seed=7)
    marker = tmp_path / "markers"
    marker.mkdir()
    reader = functools.partial(kill_once_reader, str(marker), paths[1].name)
    got = count_chunks(paths, reader=reader, workers=2)
    assert (marker / f"killed-{paths[1].name}").exists()  # the worker really died once
    assert got == ChunkCounts.from_texts(docs, pattern="o200k")


def test_worker_that_always_dies_is_reported(tmp_path):
    paths, _ = make_shards(tmp_path / "in", 3, seed=3)
    reader = functools.partial(kill_once_reader, str(tmp_path), paths[0].name)
    # max_retries=0: the one death is final, the other shards still finish
    with pytest.raises(ShardsFailedError) as ei:
        count_chunks(paths, reader=reader, workers=2, max_retries=0)
    assert list(ei.value.failures) == [str(paths[0])]
    assert "died" in ei.value.failures[str(paths[0])]


# ---------------------------------------------------------------- encoding


@pytest.mark.parametrize("fmt", ["bin", "npy", "parquet"])
def test_encode_equals_encode_batch(tmp_path, fmt):
    paths, _ = make_shards(tmp_path / "in", 4, seed=11)
    tok = bytepair.get_encoding("cl100k_base")
    m = encode_dataset(paths, tmp_path / "out", tokenizer=tok, format=fmt, workers=2)
    assert m["dtype"] == "uint32" and m["tokenizer"]["name"] == "cl100k_base"
    assert [s["output"] for s in m["shards"]] == [f"shard-{k:03d}.{fmt}" for k in range(4)]
    for p, s in zip(paths, m["shards"]):
        docs = list(iter_documents(p))
        want = expected_ids(tok, docs)
        out = tmp_path / "out" / s["output"]
        if fmt == "bin":
            got = read_bin(out, "uint32")
        elif fmt == "npy":
            import numpy as np

            arr = np.load(out)
            assert arr.dtype == np.dtype("<u4")
            got = arr.tolist()
        else:
            import pyarrow.parquet as pq

            rows = pq.read_table(out).column("tokens").to_pylist()
            assert rows == [
                ids + [tok.eot_token] for ids in tok.encode_batch(docs, disallowed_special=())
            ]
            got = [i for r in rows for i in r]
        assert got == want
        assert (s["documents"], s["tokens"]) == (len(docs), len(want))
    assert m == read_manifest(tmp_path / "out")


def test_encode_trained_tokenizer_uint16_and_special_text(tmp_path):
    # a trained tokenizer travels pickled; special-token text in a document is
    # plain text by default, and a special id with allowed_special="all"
    tok = bytepair.train(
        real_documents()[:40], vocab_size=270, pattern="gpt2", special_tokens=SPECIALS
    )
    docs = ["plain <|endoftext|> inside", "x" * 1000, "second doc"]
    write_shard(tmp_path / "a.jsonl", docs)
    m = encode_dataset(
        [tmp_path / "a.jsonl"], tmp_path / "o1", tokenizer=tok, append_eot=False, workers=1
    )
    assert m["dtype"] == "uint16"
    assert read_bin(tmp_path / "o1" / "a.bin", "uint16") == expected_ids(tok, docs, eot=False)
    m = encode_dataset(
        [tmp_path / "a.jsonl"], tmp_path / "o2", tokenizer=tok, allowed_special="all", workers=1
    )
    want = [
        i for ids in tok.encode_batch(docs, allowed_special="all") for i in ids + [tok.eot_token]
    ]
    assert read_bin(tmp_path / "o2" / "a.bin", "uint16") == want
    assert want.count(tok.eot_token) == 4


def test_killed_worker_is_retried_encode(tmp_path):
    paths, _ = make_shards(tmp_path / "in", 4, seed=5)
    ref = encode_dataset(paths, tmp_path / "ref", tokenizer="gpt2", workers=2)
    (tmp_path / "m").mkdir()
    reader = functools.partial(kill_once_reader, str(tmp_path / "m"), paths[2].name)
    got = encode_dataset(paths, tmp_path / "out", tokenizer="gpt2", reader=reader, workers=2)
    assert (tmp_path / "m" / f"killed-{paths[2].name}").exists()
    assert [s["tokens"] for s in got["shards"]] == [s["tokens"] for s in ref["shards"]]
    for s in ref["shards"]:
        assert (tmp_path / "out" / s["output"]).read_bytes() == (
            tmp_path / "ref" / s["output"]
        ).read_bytes()
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


def test_resume_writes_only_missing_shards(tmp_path):
    paths, _ = make_shards(tmp_path / "in", 6, seed=13)
    out, log = tmp_path / "out", tmp_path / "log"
    log.mkdir()
    # an interrupted run: two shards fail, the others are written
    with pytest.raises(ShardsFailedError):
        encode_dataset(
            paths,
            out,
            tokenizer="gpt2",
            workers=2,
            reader=functools.partial(failing_reader, (paths[1].name, paths[4].name)),
        )
    before = outputs_state(out)
    assert len(before) == 4
    m = encode_dataset(
        paths, out, tokenizer="gpt2", workers=2, reader=functools.partial(logging_reader, str(log))
    )
    assert reads(log) == sorted(p.name.split(".")[0] for p in (paths[1], paths[4]))
    after = outputs_state(out)
    assert {k: v for k, v in after.items() if k in before} == before  # untouched
    assert len(after) == 6 and len(m["shards"]) == 6
    # a third run has nothing to do; a run on more shards only adds those
    assert (
        encode_dataset(
            paths, out, tokenizer="gpt2", reader=functools.partial(logging_reader, str(log))
        )
        == m
    )
    assert len(reads(log)) == 2
    # a lost output file or a changed source is redone, nothing else
    (out / m["shards"][0]["output"]).unlink()
    assert paths[4].name.endswith(".jsonl")
    with open(paths[4], "a", encoding="utf-8") as f:
        f.write(json.dumps({"text": "one more document"}) + "\n")
    m2 = encode_dataset(
        paths, out, tokenizer="gpt2", workers=2, reader=functools.partial(logging_reader, str(log))
    )
    assert len(reads(log)) == 4
    assert set(reads(log)) == {p.name.split(".")[0] for p in (paths[0], paths[1], paths[4])}
    ref = encode_dataset(paths, tmp_path / "fresh", tokenizer="gpt2", workers=2)
    assert [s["tokens"] for s in m2["shards"]] == [s["tokens"] for s in ref["shards"]]
    for s in ref["shards"]:
        assert (out / s["output"]).read_bytes() == (tmp_path / "fresh" / s["output"]).read_bytes()


def test_output_dir_of_another_tokenizer_is_refused(tmp_path):
    paths, _ = make_shards(tmp_path / "in", 2, seed=2)
    encode_dataset(paths[:1], tmp_path / "out", tokenizer="gpt2", workers=1)
    with pytest.raises(OutputDirError, match="another output directory"):
        encode_dataset(paths, tmp_path / "out", tokenizer="cl100k_base", workers=1)
    with pytest.raises(OutputDirError, match="append_eot"):
        encode_dataset(paths, tmp_path / "out", tokenizer="gpt2", append_eot=False, workers=1)
    assert len(read_manifest(tmp_path / "out")["shards"]) == 1  # nothing was mixed in
    (tmp_path / "out" / "manifest.json").write_text("{not json")
    with pytest.raises(OutputDirError, match="damaged manifest"):
        encode_dataset(paths, tmp_path / "out", tokenizer="gpt2", workers=1)


def test_encode_argument_errors(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in "ab":
        (tmp_path / d / "part.txt").write_text("x")
    with pytest.raises(ValueError, match="both be written to part.bin"):
        encode_dataset(
            [tmp_path / "a" / "part.txt", tmp_path / "b" / "part.txt"],
            tmp_path / "o",
            tokenizer="gpt2",
        )
    no_eot = bytepair.train("abc abd " * 20, vocab_size=258, pattern="gpt2")
    with pytest.raises(ValueError, match="append_eot=False"):
        encode_dataset([tmp_path / "a" / "part.txt"], tmp_path / "o", tokenizer=no_eot)
    with pytest.raises(ValueError, match="output format"):
        encode_dataset(
            [tmp_path / "a" / "part.txt"], tmp_path / "o", tokenizer="gpt2", format="csv"
        )


# ---------------------------------------------------------------- engines and CLI


def test_missing_ray_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(EngineUnavailableError, match=r"pip install \"bytepair\[ray\]\""):
        get_engine("ray")
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ImportError, match=r"bytepair\[ray\]"):
        count_chunks([tmp_path / "a.txt"], engine="ray")


def sleepy(shared, i):
    """A task that finishes later the earlier it is."""
    import time

    time.sleep(shared * (3 - i))
    return i


def test_local_engine_ordered():
    eng = get_engine("local", workers=2)
    assert [i for i, _ in eng.run(sleepy, [(0,), (1,), (2,)], shared=0.3, ordered=True)] == [
        0,
        1,
        2,
    ]


def test_local_engine_outcomes():
    eng = get_engine("local", workers=2)
    got = dict(eng.run(divmod, [(3,), (0,), (4,)], shared=12))
    assert got[0] == Outcome(True, (4, 0)) and got[2] == Outcome(True, (3, 0))
    assert not got[1].ok and "ZeroDivisionError" in got[1].error


def _cli(argv: List[str]) -> int:
    from bytepair.cli.scale_out import add_parsers

    parser = argparse.ArgumentParser(prog="bytepair")
    add_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_count_chunks_and_encode_dataset(tmp_path, capsys):
    paths, docs = make_shards(tmp_path / "in", 3, seed=17)
    out = tmp_path / "c.bpc"
    assert (
        _cli(
            [
                "count-chunks",
                *map(str, paths),
                "-o",
                str(out),
                "--workers",
                "2",
                "--pattern",
                "gpt2",
            ]
        )
        == 0
    )
    assert ChunkCounts.load(out) == ChunkCounts.from_texts(
        docs, pattern="gpt2", special_tokens=SPECIALS
    )
    assert "train --counts" in capsys.readouterr().out
    assert (
        _cli(
            [
                "encode-dataset",
                *map(str, paths),
                "-o",
                str(tmp_path / "ds"),
                "-e",
                "gpt2",
                "--workers",
                "2",
            ]
        )
        == 0
    )
    m = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    tok = bytepair.get_encoding("gpt2")
    assert m["tokens"] == len(expected_ids(tok, docs)) and m["documents"] == len(docs)
    tok.save(tmp_path / "tok.json")
    assert (
        _cli(
            [
                "encode-dataset",
                str(paths[0]),
                "-o",
                str(tmp_path / "ds2"),
                "-t",
                str(tmp_path / "tok.json"),
                "--format",
                "npy",
                "--no-eot",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    assert (tmp_path / "ds2" / "shard-000.npy").exists()


def test_script_without_main_guard_and_reader_in_main(tmp_path):
    # spawn workers must not re-run an unguarded driver script; a reader defined
    # in a (guarded) script still reaches the workers.
    import subprocess

    (tmp_path / "a.txt").write_text("hello world")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(Path(bytepair.__file__).parent.parent), os.environ.get("PYTHONPATH", "")]
        ),
    )
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(
        "from bytepair.distributed import count_chunks\n"
        f"c = count_chunks([{str(tmp_path / 'a.txt')!r}], pattern='gpt2', workers=2)\n"
        "print(sorted(c.items()))\n"
    )
    guarded = tmp_path / "guarded.py"
    guarded.write_text(
        "from bytepair.distributed import count_chunks\n"
        "def shout(path):\n    return [open(path).read().upper()]\n"
        "if __name__ == '__main__':\n"
        f"    c = count_chunks([{str(tmp_path / 'a.txt')!r}], pattern='gpt2',\n"
        "                     reader=shout, workers=1)\n"
        "    print(sorted(c.items()))\n"
    )
    for script, want in [
        (unguarded, "[(b' world', 1), (b'hello', 1)]"),
        (guarded, "[(b' WORLD', 1), (b'HELLO', 1)]"),
    ]:
        run = subprocess.run(
            [sys.executable, str(script)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == want


def test_local_engine_keeps_workers_and_replaces_dead_idle_ones():
    from bytepair.distributed import LocalEngine

    with LocalEngine(2) as eng:
        assert dict(eng.run(divmod, [(3,), (5,)], shared=15)) == {
            0: Outcome(True, (5, 0)),
            1: Outcome(True, (3, 0)),
        }
        pids = {s.proc.pid for s in eng._idle}
        assert len(pids) == 2
        eng._idle[0].proc.kill()  # dies while idle, between two runs
        eng._idle[0].proc.join()
        got = dict(eng.run(divmod, [(2,), (4,), (7,)], shared=14))
        assert got == {0: Outcome(True, (7, 0)), 1: Outcome(True, (3, 2)), 2: Outcome(True, (2, 0))}
        assert len({s.proc.pid for s in eng._idle} & pids) == 1  # the live one was reused
    assert eng._idle == []


def test_resume_redoes_a_source_edited_to_the_same_size(tmp_path):
    src = tmp_path / "a.txt"
    src.write_text("hello world\n", encoding="utf-8")
    out = tmp_path / "out"
    m = encode_dataset([src], out, tokenizer="gpt2")
    assert m["shards"][0]["source_mtime_ns"] == src.stat().st_mtime_ns
    first = (out / m["shards"][0]["output"]).read_bytes()
    # same size, other text, a later modification time
    src.write_text("HELLO WORLD\n", encoding="utf-8")
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    m2 = encode_dataset([src], out, tokenizer="gpt2")
    again = (out / m2["shards"][0]["output"]).read_bytes()
    assert again != first
    fresh = encode_dataset([src], tmp_path / "fresh", tokenizer="gpt2")
    assert again == (tmp_path / "fresh" / fresh["shards"][0]["output"]).read_bytes()


def core_pool_size(shared, _):
    """A task body: the size of the core pool a counting task gets."""
    from bytepair import _core
    from bytepair.distributed.engines import task_threads

    return _core.ChunkCounter("gpt2", [], None, task_threads()).num_threads


@pytest.mark.parametrize("workers", [1, 2])
def test_each_worker_counts_on_its_share_of_the_cores(workers):
    from bytepair.distributed.engines import LocalEngine

    eng = LocalEngine(workers=workers)
    got = [o.value for _, o in eng.run(core_pool_size, [(i,) for i in range(workers)], ordered=True)]
    assert got == [max(1, (os.cpu_count() or 1) // workers)] * workers
