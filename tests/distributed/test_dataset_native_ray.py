"""The native shard pipeline on Ray tasks: the same files, byte for byte, as
the Python path (each Ray task runs the pipeline on its shard)."""

from __future__ import annotations

import pytest

from conftest import optional

ray = optional("ray")
pytestmark = pytest.mark.ray

from test_dataset_native import files, python_outputs
from test_distributed_local import make_shards
from test_distributed_ray import engine  # noqa: F401 - the fixture

from bytepair.distributed import encode_dataset


@pytest.mark.parametrize("fmt", ["bin", "npy", "parquet"])
def test_ray_native_files_equal_the_python_path(engine, tmp_path, monkeypatch, fmt):  # noqa: F811
    paths, _ = make_shards(tmp_path / "in", 5, seed=41)
    ref = python_outputs(monkeypatch, paths, tmp_path / "ref", tokenizer="o200k_base", format=fmt, workers=2)
    m = encode_dataset(paths, tmp_path / "got", tokenizer="o200k_base", format=fmt, engine=engine)
    got = files(tmp_path / "got")
    assert got.keys() == ref.keys()
    for name in ref:
        if name != "manifest.json":
            assert got[name] == ref[name], name
    assert len(m["shards"]) == 5
