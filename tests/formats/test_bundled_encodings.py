"""Bundled encodings: names, hashes, model names, a fresh load, corruption."""

from __future__ import annotations

import pytest

import bytepair
from bytepair import registry
from bytepair.errors import FormatError, UnknownEncodingError
from conftest import optional


def test_names_and_aliases():
    assert bytepair.list_encoding_names() == [
        "gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]
    assert bytepair.get_encoding("r50k_base").encode("Hello") == bytepair.get_encoding("gpt2").encode("Hello")
    assert bytepair.get_encoding("gpt2") is bytepair.get_encoding("gpt2")


def test_unknown_name_lists_available():
    with pytest.raises(UnknownEncodingError) as e:
        bytepair.get_encoding("p50k_bass")
    msg = str(e.value)
    assert all(n in msg for n in bytepair.list_encoding_names())
    assert isinstance(e.value, ValueError)
    with pytest.raises(TypeError):
        bytepair.get_encoding(None)


@pytest.mark.parametrize("model,name", [
    ("gpt-4o", "o200k_base"), ("gpt-4o-mini-2024-07-18", "o200k_base"), ("o1-preview", "o200k_base"),
    ("gpt-5", "o200k_base"), ("gpt-4", "cl100k_base"), ("gpt-4-0613", "cl100k_base"),
    ("gpt-3.5-turbo-16k", "cl100k_base"), ("text-embedding-3-small", "cl100k_base"),
    ("davinci", "r50k_base"), ("gpt2", "gpt2"), ("ft:gpt-4o-2024:org::id", "o200k_base"),
])
def test_models_match_tiktoken(model, name):
    tiktoken = optional("tiktoken")
    assert bytepair.encoding_name_for_model(model) == name
    assert tiktoken.encoding_name_for_model(model) == name
    assert bytepair.encoding_for_model(model).name == name


def test_unknown_model():
    with pytest.raises(KeyError) as e:
        bytepair.encoding_for_model("my-own-model")
    assert "o200k_base" in str(e.value)


def test_hash_mismatch_names_the_file(monkeypatch):
    spec = registry._SPECS["gpt2"]
    monkeypatch.setitem(registry._SPECS, "gpt2", spec._replace(sha256="0" * 64))
    with pytest.raises(FormatError) as e:
        registry.read_bundled_ranks("gpt2")
    assert "gpt2.tiktoken.gz" in str(e.value) and "sha256" in str(e.value)


def test_corrupt_rank_file_is_a_clear_error():
    data = registry.read_bundled_ranks("gpt2")
    lines = data.splitlines()
    lines[300] = lines[300].split()[0] + b" 999999"
    with pytest.raises(ValueError, match="line 301"):
        registry.load_bundled("gpt2", b"\n".join(lines))
    with pytest.raises(ValueError, match="line 2"):
        registry.load_bundled("gpt2", b"AA== 0\n!!!! 1\n")


def test_fresh_load_equals_the_cached_encoding():
    # a new build of the largest encoding from its rank file (its load time is
    # measured by benches/bench_encode.py: load_s, part of the cold figure)
    tok = registry.load_bundled("o200k_base", registry.read_bundled_ranks("o200k_base"))
    assert tok.encode("hello") == [24912]
    assert tok == bytepair.get_encoding("o200k_base") and tok is not bytepair.get_encoding("o200k_base")


def test_token_views_agree_with_file():
    enc = bytepair.get_encoding("cl100k_base")
    toks = enc.token_bytes_list
    assert len(toks) == 100256 and toks[15339] == b"hello"
    assert enc.mergeable_ranks[b" world"] == 1917
    assert enc.eot_token == 100257 and enc.max_token_value == 100276
