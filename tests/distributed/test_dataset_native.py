"""The native shard pipeline (Rust reading, encoding and writing on threads)
against the Python path it replaces: the same files byte for byte on every
engine and output format, the Python fallback for inputs only Python's json
takes, a write failure mid-file, and ``Tokenizer.encode_files``."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest
from test_distributed_local import make_shards, real_documents, write_shard

import bytepair
from bytepair.distributed import LocalEngine, ShardsFailedError, encode_dataset, iter_documents, read_manifest
from bytepair.distributed import encode as enc_mod
from conftest import optional


def python_outputs(monkeypatch, paths, out: Path, **kw) -> Dict[str, bytes]:
    """What the Python path (the encoder before the native pipeline) writes."""
    with monkeypatch.context() as m:
        # no native run here, and the workers (which import the module afresh)
        # are sent the Python task body itself
        m.setattr(enc_mod.pipeline, "policy_lists", lambda *a: None)
        m.setattr(enc_mod, "_encode_shard", enc_mod._encode_shard_python)
        encode_dataset(paths, out, **kw)
    return {p.name: p.read_bytes() for p in out.iterdir()}


def files(out: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir()}


def count_python_path(monkeypatch) -> List[str]:
    calls: List[str] = []
    real = enc_mod._encode_shard_python

    def spy(shared, path, out_path):
        calls.append(os.path.basename(path))
        return real(shared, path, out_path)

    monkeypatch.setattr(enc_mod, "_encode_shard_python", spy)
    return calls


@pytest.mark.parametrize("fmt", ["bin", "npy", "parquet"])
def test_native_files_equal_the_python_path_byte_for_byte(tmp_path, monkeypatch, fmt):
    paths, _ = make_shards(tmp_path / "in", 7, seed=3)
    toks = ["o200k_base", "gpt2"]
    refs = {
        tok: python_outputs(monkeypatch, paths, tmp_path / f"ref-{tok}", tokenizer=tok, format=fmt, workers=2)
        for tok in toks
    }
    calls = count_python_path(monkeypatch)
    for tok in toks:
        ref = refs[tok]
        got_dir = tmp_path / f"got-{tok}"
        m = encode_dataset(paths, got_dir, tokenizer=tok, format=fmt, workers=2)
        assert calls == []  # every shard went through the native pipeline
        got = files(got_dir)
        assert got.keys() == ref.keys()
        for name in ref:
            if name != "manifest.json":
                assert got[name] == ref[name], name
        ref_m = json.loads(ref["manifest.json"])
        assert [(s["documents"], s["tokens"]) for s in m["shards"]] == [
            (s["documents"], s["tokens"]) for s in ref_m["shards"]
        ]
        # the process engine's workers run the same pipeline, one shard per task
        with LocalEngine(2) as eng:
            encode_dataset(paths, tmp_path / f"proc-{tok}", tokenizer=tok, format=fmt, engine=eng)
        proc = files(tmp_path / f"proc-{tok}")
        assert {k: v for k, v in proc.items() if k != "manifest.json"} == {
            k: v for k, v in ref.items() if k != "manifest.json"
        }


def test_small_chunks_many_threads_same_bytes(tmp_path, monkeypatch):
    # many chunks per shard and more threads than cores: order is restored
    docs = real_documents()
    paths = []
    for k in range(3):
        p = tmp_path / "in" / f"p{k}.jsonl"
        p.parent.mkdir(exist_ok=True)
        write_shard(p, docs[k::3])
        paths.append(p)
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="cl100k_base", workers=1)
    tok = bytepair.get_encoding("cl100k_base")
    got: Dict[int, bytes] = {}

    def done(i, documents, tokens, ids, offsets, error):
        assert error is None
        got[i] = ids

    enc_mod.pipeline.run(tok, [(str(p), "memory", None) for p in paths], done, eot=tok.eot_token)
    for k, p in enumerate(paths):
        ids = got[k]
        assert ids == ref[f"p{k}.bin"]
    out = tmp_path / "small"
    out.mkdir()
    import bytepair._core as core

    res = {}
    core.encode_shards(
        tok._core,
        [(str(p), "jsonl", False, "bin", str(out / f"p{k}.bin")) for k, p in enumerate(paths)],
        column="text",
        eot=tok.eot_token,
        uint16=False,
        num_threads=5,
        allowed_special=[],
        disallowed_special=[],
        loader=None,
        on_done=lambda i, *rest: res.__setitem__(i, rest),
        chunk_bytes=300,
        max_inflight_bytes=2000,
    )
    assert all(r[-1] is None for r in res.values())
    for k in range(3):
        assert (out / f"p{k}.bin").read_bytes() == ref[f"p{k}.bin"]


def test_inputs_only_python_takes_fall_back_and_match(tmp_path, monkeypatch):
    shards = {
        # Python's json takes these; serde_json does not
        "nan.jsonl": b'{"text": "with a nan", "score": NaN}\n{"text": "b"}\n',
        "surrogate.jsonl": b'{"text": "lone \\ud800 half"}\n',
        "uspace.jsonl": b'{"text": "a"}\n\xe2\x80\x83\n{"text": "b"}\n',
        "dup.jsonl": b'{"text": "first", "text": "second"}\n',
        "bom.jsonl": b'\xef\xbb\xbf{"text": "a"}\r\n{"text": "b"}\r\n',
        "plain.txt": "caf\u00e9 \U0001f600".encode(),
    }
    for name, raw in shards.items():
        (tmp_path / name).write_bytes(raw)
    paths = [tmp_path / n for n in shards]
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="gpt2", workers=1)
    calls = count_python_path(monkeypatch)
    encode_dataset(paths, tmp_path / "got", tokenizer="gpt2", workers=2)
    assert sorted(calls) == ["nan.jsonl", "surrogate.jsonl", "uspace.jsonl"]
    got = files(tmp_path / "got")
    for name in ref:
        if name != "manifest.json":
            assert got[name] == ref[name], name


def test_bad_shard_report_is_the_python_one(tmp_path):
    (tmp_path / "ok.jsonl").write_bytes(b'{"text": "fine"}\n')
    (tmp_path / "bad.jsonl").write_bytes(b'{"text": "ok"}\n' * 5000 + b'{"text": oops}\n')
    (tmp_path / "badgz.jsonl.gz").write_bytes(gzip.compress(b'{"text": "x"}\n')[:-6])
    (tmp_path / "notext.parquet").write_bytes(b"PAR1 nope")
    paths = [tmp_path / n for n in ["ok.jsonl", "bad.jsonl", "badgz.jsonl.gz", "notext.parquet"]]
    with pytest.raises(ShardsFailedError) as ei:
        encode_dataset(paths, tmp_path / "out", tokenizer="gpt2")
    f = ei.value.failures
    assert set(f) == {str(p) for p in paths[1:]}
    assert "bad.jsonl:5001: invalid JSON" in f[str(paths[1])]
    assert "damaged gzip" in f[str(paths[2])]
    assert "not a valid Parquet file" in f[str(paths[3])]
    assert [s["output"] for s in read_manifest(tmp_path / "out")["shards"]] == ["ok.bin"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "ok.bin"]


def test_write_failure_leaves_no_partial_file_and_resumes(tmp_path):
    # the file-size limit makes a write fail mid-file (EFBIG), like a full disk
    paths, _ = make_shards(tmp_path / "in", 4, seed=8, docs=real_documents() * 3)
    big = max(paths, key=lambda p: p.stat().st_size)
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))
        from bytepair.distributed import encode_dataset, ShardsFailedError
        try:
            encode_dataset({[str(p) for p in paths]!r}, {str(tmp_path / "out")!r}, tokenizer="o200k_base")
        except ShardsFailedError as e:
            print(sorted(e.failures.values())[0])
            sys.exit(3)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr
    assert "File too large" in r.stdout
    out = tmp_path / "out"
    left = sorted(p.name for p in out.iterdir())
    assert not [n for n in left if n.endswith(".tmp")]
    done = {s["output"] for s in read_manifest(out)["shards"]}
    assert f"{big.name.split('.')[0]}.bin" not in done
    assert set(left) == done | {"manifest.json"}
    m = encode_dataset(paths, out, tokenizer="o200k_base")
    fresh = encode_dataset(paths, tmp_path / "fresh", tokenizer="o200k_base")
    assert m["shards"] == fresh["shards"]
    for s in fresh["shards"]:
        assert (out / s["output"]).read_bytes() == (tmp_path / "fresh" / s["output"]).read_bytes()


def test_encode_files_equals_encode_batch_to_numpy(tmp_path):
    np = optional("numpy")
    paths, docs = make_shards(tmp_path / "in", 5, seed=21)
    for name in ["o200k_base", "cl100k_base"]:
        tok = bytepair.get_encoding(name)
        ids, offsets = tok.encode_files(paths)
        want_ids, want_offsets = tok.encode_batch_to_numpy(docs, disallowed_special=())
        assert ids.dtype == np.uint32 and offsets.dtype == np.int64
        assert np.array_equal(ids, want_ids) and np.array_equal(offsets, want_offsets)
        _, one_off = tok.encode_files(paths[0], num_threads=1)
        first = list(iter_documents(paths[0]))
        assert one_off.tolist() == tok.encode_batch_to_numpy(first, disallowed_special=())[1].tolist()
    # a bad shard: the Python reader's error, naming path and line
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "a"}\n[1]\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: expected a JSON object"):
        bytepair.get_encoding("gpt2").encode_files([paths[0], bad])
    # only Python's json takes NaN: same ids through the fallback
    nan = tmp_path / "nan.jsonl"
    nan.write_bytes(b'{"text": "x y", "v": NaN}\n')
    tok = bytepair.get_encoding("gpt2")
    assert tok.encode_files(nan)[0].tolist() == tok.encode("x y")


def test_fallback_and_concurrent_batches_never_wait_on_each_other(tmp_path, monkeypatch):
    # one thread for the pipeline, a Python-path shard among native ones, and
    # another thread running batch calls on the same pools meanwhile
    import threading

    paths, _ = make_shards(tmp_path / "in", 4, seed=30)
    nan = tmp_path / "in" / "nan.jsonl"
    nan.write_bytes(b'{"text": "x", "v": NaN}\n' * 50)
    paths = [paths[0], nan, *paths[1:]]
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="gpt2", workers=1)
    tok = bytepair.get_encoding("gpt2")
    docs = real_documents()
    want = tok.encode_batch(docs[:200], num_threads=2)
    errors: List[BaseException] = []

    def batches() -> None:
        try:
            for _ in range(3):
                assert tok.encode_batch(docs[:200], num_threads=2) == want
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    def dataset() -> None:
        try:
            encode_dataset(paths, tmp_path / "got", tokenizer=tok, workers=1)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=f, daemon=True) for f in (dataset, batches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
        assert not t.is_alive(), "a run waited forever"
    assert errors == []
    got = files(tmp_path / "got")
    for name in ref:
        if name != "manifest.json":
            assert got[name] == ref[name], name


def test_parquet_batches_dictionary_and_large_strings(tmp_path, monkeypatch):
    pa = optional("pyarrow")
    pq = optional("pyarrow.parquet")
    docs = [d for d in real_documents() if len(d) < 400][:3000] * 7  # > one batch of 8192 rows
    (tmp_path / "in").mkdir()
    pq.write_table(pa.table({"text": docs}), tmp_path / "in" / "many.parquet", row_group_size=5000)
    pq.write_table(pa.table({"text": pa.array(docs[:500]).dictionary_encode()}), tmp_path / "in" / "dict.parquet")
    pq.write_table(pa.table({"text": pa.array(docs[:500], type=pa.large_string())}), tmp_path / "in" / "large.parquet")
    paths = sorted((tmp_path / "in").iterdir())
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="cl100k_base", workers=1)
    calls = count_python_path(monkeypatch)
    encode_dataset(paths, tmp_path / "got", tokenizer="cl100k_base", workers=2)
    assert calls == []
    got = files(tmp_path / "got")
    for name in ref:
        if name != "manifest.json":
            assert got[name] == ref[name], name
    # a null row is no document: skipped, as every reader skips it
    pq.write_table(pa.table({"text": ["a", None, "b"]}), tmp_path / "null.parquet")
    m = encode_dataset([tmp_path / "null.parquet"], tmp_path / "out2", tokenizer="gpt2")
    assert m["documents"] == 2


def test_ctrl_c_stops_the_run_without_partial_files_and_resumes(tmp_path, monkeypatch):
    import signal

    paths, _ = make_shards(tmp_path / "in", 6, seed=17)
    assert paths[1].name.endswith(".parquet")
    # zstd: the Rust reader hands the shard to the Python loader, which interrupts
    pq = optional("pyarrow.parquet")
    pq.write_table(pq.read_table(paths[1]), paths[1], compression="zstd")
    real = enc_mod.pipeline.parquet_columns
    out = tmp_path / "out"

    def interrupting(column, path):
        # once shard 0 is recorded (not in the instant between its rename and its manifest entry)
        deadline = time.monotonic() + 30
        while not (read_manifest(out) or {}).get("shards") and time.monotonic() < deadline:
            time.sleep(0.005)
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while the pipeline runs
        yield from real(column, path)

    with monkeypatch.context() as m:
        m.setattr(enc_mod.pipeline, "parquet_columns", interrupting)
        with pytest.raises(KeyboardInterrupt):
            encode_dataset(paths, out, tokenizer="gpt2", workers=2)
    left = {p.name for p in out.iterdir()}
    assert not [n for n in left if n.endswith(".tmp")]
    done = {s["output"] for s in read_manifest(out)["shards"]}
    assert 0 < len(done) < 6 and left == done | {"manifest.json"}
    m2 = encode_dataset(paths, out, tokenizer="gpt2", workers=2)
    fresh = encode_dataset(paths, tmp_path / "fresh", tokenizer="gpt2", workers=2)
    assert m2["shards"] == fresh["shards"]
    for s in fresh["shards"]:
        assert (out / s["output"]).read_bytes() == (tmp_path / "fresh" / s["output"]).read_bytes()
