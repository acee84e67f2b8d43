"""Parquet shards read in Rust (src/dataset/parquet.rs): the same documents,
ids and error reports as the pyarrow readers, whatever the codec, encoding,
row groups and pages; what the Rust reader does not take (zstd, brotli, lz4,
binary or nested columns...) goes to the pyarrow loader, and a shard it fails
on is redone the Python way for the Python report."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Dict, List

import numpy as np
import pytest
from test_dataset_native import count_python_path, files, python_outputs
from test_distributed_local import real_documents

import bytepair
from bytepair.distributed import ShardsFailedError, encode_dataset, iter_documents
from bytepair.shards import pipeline as native
from conftest import optional

pa = optional("pyarrow")
pq = optional("pyarrow.parquet")


def spy_loader(monkeypatch) -> List[str]:
    """Names of the shards the pyarrow loader was asked for."""
    calls: List[str] = []
    real = native.parquet_columns

    def spy(column, path):
        calls.append(os.path.basename(path))
        yield from real(column, path)

    monkeypatch.setattr(native, "parquet_columns", spy)
    return calls


def documents() -> List[str]:
    docs = [d for d in real_documents() if len(d) < 2000][:2500]
    # empty strings, one at a row-group edge; the same text twice (dictionary)
    docs[0:0] = ["", "caf\u00e9 \U0001f600 \ud55c\uad6d\uc5b4", ""]
    docs[700:700] = [""]
    return docs + docs[:300]


#: name -> write_table arguments; the Rust reader takes the first ones
NATIVE = {
    "snappy.parquet": dict(row_group_size=700, data_page_size=4096),
    "gzip.parquet": dict(compression="gzip", use_dictionary=False, data_page_version="2.0", row_group_size=1000),
    "none.parquet": dict(compression="none", use_dictionary=False, column_encoding={"text": "DELTA_BYTE_ARRAY"}),
    "dlba.parquet": dict(use_dictionary=False, column_encoding={"text": "DELTA_LENGTH_BYTE_ARRAY"}),
    "v2dict.parquet": dict(data_page_version="2.0", row_group_size=900, dictionary_pagesize_limit=2048),
}
FALLBACK = {
    "zstd.parquet": dict(compression="zstd", row_group_size=700),
    "brotli.parquet": dict(compression="brotli"),
    "lz4.parquet": dict(compression="lz4"),
}


def write_all(folder: Path) -> Dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    docs = documents()
    n = len(docs)
    # the text column after a nested and an int column, so its leaf is not the first
    table = pa.table(
        {
            "meta": pa.array([{"a": i, "b": str(i)} for i in range(n)]),
            "id": list(range(n)),
            "text": docs,
        }
    )
    paths = {}
    for name, kw in {**NATIVE, **FALLBACK}.items():
        pq.write_table(table, folder / name, **kw)
        paths[name] = folder / name
    kinds = {
        "large.parquet": pa.table({"text": pa.array(docs, type=pa.large_string())}),
        "dictionary.parquet": pa.table({"text": pa.array(docs).dictionary_encode()}),
        "required.parquet": pa.Table.from_arrays(
            [pa.array(docs)], schema=pa.schema([pa.field("text", pa.string(), nullable=False)])
        ),
        "empty.parquet": pa.table({"text": pa.array([], type=pa.string())}),
    }
    for name, t in kinds.items():
        pq.write_table(t, folder / name, row_group_size=800)
        paths[name] = folder / name
    return paths


def test_every_codec_and_encoding_gives_the_pyarrow_documents(tmp_path, monkeypatch):
    paths = write_all(tmp_path / "in")
    tok = bytepair.get_encoding("o200k_base")
    loader = spy_loader(monkeypatch)
    python = []
    monkeypatch.setattr(native, "iter_documents", lambda *a, **k: python.append(a) or iter_documents(*a, **k))
    for name, p in paths.items():
        loader.clear()
        ids, offsets = tok.encode_files(p, num_threads=2)
        want_ids, want_offsets = tok.encode_batch_to_numpy(list(iter_documents(p)), num_threads=1)
        assert np.array_equal(ids, want_ids) and np.array_equal(offsets, want_offsets), name
        assert loader == ([name] if name in FALLBACK else []), name
    assert python == []  # no shard needed the Python path
    # the shards the Rust reader takes, in one run with tiny chunks and no loader at all
    names = [n for n in sorted(paths) if n not in FALLBACK]
    errors: List[object] = []
    ids, offsets = bytepair._core.encode_shards(
        tok._core,
        [(str(paths[n]), "parquet", False, "collect", None) for n in names],
        column="text",
        eot=None,
        uint16=False,
        num_threads=2,
        allowed_special=[],
        disallowed_special=[],
        loader=None,
        on_done=lambda *a: errors.append(a[-1]),
        chunk_bytes=100,
        max_inflight_bytes=1000,
    )
    assert errors == [None] * len(names)
    docs = [d for n in names for d in iter_documents(paths[n])]
    want_ids, want_offsets = tok.encode_batch_to_numpy(docs)
    assert np.array_equal(np.asarray(ids), want_ids) and np.array_equal(np.asarray(offsets), want_offsets)
    assert len(docs) > 8000


@pytest.mark.parametrize("fmt", ["bin", "npy"])
def test_dataset_files_equal_the_python_path_byte_for_byte(tmp_path, monkeypatch, fmt):
    paths = sorted(write_all(tmp_path / "in").values())
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="cl100k_base", format=fmt, workers=1)
    ref_eot = python_outputs(
        monkeypatch, paths, tmp_path / "ref-noeot", tokenizer="cl100k_base", format=fmt, append_eot=False
    )
    calls = count_python_path(monkeypatch)
    loader = spy_loader(monkeypatch)
    encode_dataset(paths, tmp_path / "got", tokenizer="cl100k_base", format=fmt, workers=2)
    encode_dataset(paths, tmp_path / "got-noeot", tokenizer="cl100k_base", format=fmt, workers=2, append_eot=False)
    assert calls == []
    assert sorted(loader) == sorted(list(FALLBACK) * 2)
    got = files(tmp_path / "got")
    assert set(got) == set(ref)
    for name in ref:
        if name != "manifest.json":
            assert got[name] == ref[name], name
    got_eot = files(tmp_path / "got-noeot")
    for name in ref_eot:
        if name != "manifest.json":
            assert got_eot[name] == ref_eot[name], name


def bad_shards(folder: Path) -> List[Path]:
    folder.mkdir()
    docs = [f"hello world {i}" for i in range(5000)]
    pq.write_table(pa.table({"text": docs}), folder / "ok.parquet", row_group_size=700)
    late_null = docs[:2500] + [None] + docs[2501:]
    pq.write_table(pa.table({"text": late_null}), folder / "null.parquet", row_group_size=700)
    raw = (folder / "ok.parquet").read_bytes()
    (folder / "truncated.parquet").write_bytes(raw[: len(raw) // 2])
    pq.write_table(pa.table({"text": docs}), folder / "plain.parquet", compression="none", use_dictionary=False)
    damaged = bytearray((folder / "plain.parquet").read_bytes())
    damaged[len(damaged) // 3 : len(damaged) // 3 + 40] = b"\xff" * 40  # page data, footer intact
    (folder / "damaged.parquet").write_bytes(bytes(damaged))
    (folder / "garbage.parquet").write_bytes(b"PAR1 not parquet at all PAR1")
    pq.write_table(pa.table({"body": docs}), folder / "wrongcol.parquet")
    pq.write_table(pa.table({"text": list(range(10))}), folder / "int.parquet")
    pq.write_table(pa.table({"text": [b"a", b"b"]}), folder / "binary.parquet")
    bad_utf8 = pa.array([b"ok", b"\xff\xfe", b"x"]).view(pa.string())
    pq.write_table(pa.table({"text": bad_utf8}), folder / "notutf8.parquet")
    # stored as UTF-8 strings, read by pyarrow as other types: refused by both
    pq.write_table(pa.table({"text": pa.array(["a"], type=pa.string_view())}), folder / "view.parquet")
    pq.write_table(pa.table({"text": pa.array(["{}"], type=pa.json_(pa.string()))}), folder / "json.parquet")
    (folder / "last.jsonl").write_text('{"text": "the end"}\n')
    return sorted(folder.iterdir())


def failures(run) -> Dict[str, str]:
    with pytest.raises(ShardsFailedError) as ei:
        run()
    return dict(ei.value.failures)


def test_bad_parquet_shards_report_the_python_way_and_others_finish(tmp_path, monkeypatch):
    paths = bad_shards(tmp_path / "in")

    def python_run():
        with monkeypatch.context() as m:
            m.setattr(native, "policy_lists", lambda *a: None)
            encode_dataset(paths, tmp_path / "ref", tokenizer="gpt2", workers=1)

    ref = failures(python_run)
    got = failures(lambda: encode_dataset(paths, tmp_path / "got", tokenizer="gpt2", workers=2))
    assert got == ref
    by_name = {os.path.basename(k): v for k, v in got.items()}
    assert set(by_name) == {
        "truncated.parquet",
        "damaged.parquet",
        "garbage.parquet",
        "wrongcol.parquet",
        "int.parquet",
        "binary.parquet",
        "notutf8.parquet",
        "view.parquet",
        "json.parquet",
    }
    assert "no column 'text'" in by_name["wrongcol.parquet"]
    assert "has type int64, not string" in by_name["int.parquet"]
    assert "not a valid Parquet file" in by_name["truncated.parquet"]
    assert "damaged Parquet data" in by_name["damaged.parquet"]
    done = files(tmp_path / "got")
    assert sorted(done) == ["last.bin", "manifest.json", "null.bin", "ok.bin", "plain.bin"]
    ref_files = files(tmp_path / "ref")
    for name in ["last.bin", "ok.bin", "plain.bin"]:
        assert done[name] == ref_files[name]
    # encode_files: the same error as the Python readers raise
    tok = bytepair.get_encoding("gpt2")
    for p in paths:
        if p.name in by_name:
            with pytest.raises(Exception) as native_err:
                tok.encode_files([tmp_path / "in" / "ok.parquet", p])
            with pytest.raises(Exception) as python_err:
                list(iter_documents(p))
            assert type(native_err.value) is type(python_err.value) and str(native_err.value) == str(
                python_err.value
            ), p.name


def test_pyarrow_is_needed_only_for_what_the_rust_reader_refuses(tmp_path, monkeypatch):
    docs = documents()[:400]
    pq.write_table(pa.table({"text": docs}), tmp_path / "snappy.parquet", row_group_size=100)
    pq.write_table(pa.table({"text": docs}), tmp_path / "zstd.parquet", compression="zstd")
    tok = bytepair.get_encoding("gpt2")
    want = tok.encode_batch_to_numpy(docs)
    with monkeypatch.context() as m:
        for name in [n for n in list(sys.modules) if n == "pyarrow" or n.startswith("pyarrow.")]:
            m.delitem(sys.modules, name)
        m.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
        ids, offsets = tok.encode_files(tmp_path / "snappy.parquet")
        assert np.array_equal(ids, want[0]) and np.array_equal(offsets, want[1])
        with pytest.raises(ShardsFailedError, match="reading Parquet needs pyarrow"):
            encode_dataset([tmp_path / "snappy.parquet", tmp_path / "zstd.parquet"], tmp_path / "out", tokenizer="gpt2")
    assert sorted(files(tmp_path / "out")) == ["manifest.json", "snappy.bin"]


def test_damaged_files_give_the_python_readers_result_never_a_panic(tmp_path):
    # random bytes over the pages or the footer of files of each codec and page
    # version: the crate may panic on some (caught, the shard fails and is redone
    # by pyarrow); encode_files gives exactly what the Python readers give
    import random

    tok = bytepair.get_encoding("gpt2")
    docs = [f"doc {i} " * (i % 13) for i in range(3000)]
    table = pa.table({"text": docs, "n": list(range(3000))})
    bases = []
    for k, kw in enumerate(
        [
            dict(row_group_size=500),
            dict(compression="gzip", use_dictionary=False, row_group_size=700),
            dict(compression="none", data_page_version="2.0"),
        ]
    ):
        pq.write_table(table, tmp_path / f"base{k}.parquet", **kw)
        bases.append((tmp_path / f"base{k}.parquet").read_bytes())
    rng = random.Random(20261201)
    outcomes = {"same documents": 0, "same error": 0}
    p = tmp_path / "damaged.parquet"
    for t in range(300):
        raw = bytearray(rng.choice(bases))
        data_end = int(len(raw) * 0.8) if rng.random() < 0.7 else len(raw)
        for _ in range(rng.randint(1, 3)):
            i, n = rng.randrange(data_end), rng.choice([1, 1, 2, 8, 64])
            raw[i : i + n] = bytes(rng.randrange(256) for _ in range(n))
        p.write_bytes(bytes(raw))
        try:
            want, want_err = tok.encode_batch_to_numpy(list(iter_documents(p))), None
        except Exception as e:  # noqa: BLE001 - whatever the Python readers raise
            want, want_err = None, (type(e), str(e))
        try:
            got, got_err = tok.encode_files(p), None
        except Exception as e:  # noqa: BLE001
            got, got_err = None, (type(e), str(e))
        assert got_err == want_err, t
        if want is not None:
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]), t
            outcomes["same documents"] += 1
        else:
            outcomes["same error"] += 1
    assert min(outcomes.values()) > 20, outcomes
