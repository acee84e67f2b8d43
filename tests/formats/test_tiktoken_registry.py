"""tiktoken's whole registry and model table, offline: p50k_base rebuilt from the
gpt2 rank file and proven by tiktoken's sha256 pin, p50k_edit, o200k_harmony, and
every model name of tiktoken 0.14's table."""

from __future__ import annotations

import hashlib

import pytest

import bytepair
from bytepair import registry
from conftest import corpus, optional, tiktoken_encoding

P50K_PIN = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
NEW = ["p50k_base", "p50k_edit", "o200k_harmony"]


def test_p50k_rank_file_is_built_from_r50k_and_matches_tiktokens_pin():
    r50k = registry.read_bundled_ranks("r50k_base")
    data = registry.p50k_ranks_from_r50k(r50k)
    assert hashlib.sha256(data).hexdigest() == P50K_PIN
    assert registry.read_bundled_ranks("p50k_base") == data == registry.read_bundled_ranks("p50k_edit")
    # r50k's lines, then the 24 space runs, nothing else
    assert data.startswith(r50k) and len(data.splitlines()) == 50256 + 24


def test_pins_are_tiktokens():
    tiktoken_ext = optional("tiktoken_ext.openai_public")
    import inspect

    src = inspect.getsource(tiktoken_ext)
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        assert registry._SPECS[name].sha256 in src


@pytest.mark.parametrize("name", NEW)
def test_shape_matches_tiktoken(name):
    ours = bytepair.get_encoding(name)
    ref = tiktoken_encoding(name)
    assert ours.n_vocab == ref.n_vocab
    assert ours.max_token_value == ref.max_token_value
    assert ours._special_tokens == ref._special_tokens
    assert ours._mergeable_ranks == ref._mergeable_ranks
    assert ours.eot_token == ref.eot_token


def test_explicit_n_vocab():
    for name, spec in registry._SPECS.items():
        if spec.explicit_n_vocab:
            enc = bytepair.get_encoding(name)
            assert len(enc._mergeable_ranks) + len(enc._special_tokens) == spec.explicit_n_vocab == enc.n_vocab


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("text_name", ["en_pydocs.txt", "code_python.txt", "ko_prose.txt", "multi_unicode.txt"])
def test_encodes_like_tiktoken(name, text_name):
    ours, ref = bytepair.get_encoding(name), tiktoken_encoding(name)
    text = corpus(text_name)[:20000]
    ids = ours.encode(text, disallowed_special=())
    assert ids == ref.encode(text, disallowed_special=())
    assert ours.decode(ids) == ref.decode(ids)


def test_p50k_whitespace_tokens_and_filler_rank():
    enc, ref = bytepair.get_encoding("p50k_base"), tiktoken_encoding("p50k_base")
    code = "def f(x):\n" + "".join(" " * n + "return x\n" for n in range(1, 30))
    assert enc.encode(code) == ref.encode(code)
    assert any(50257 <= i <= 50280 for i in enc.encode(code))
    # rank 50256 is <|endoftext|>: never produced from plain text, decodes to its text
    assert 50256 not in enc.encode("<|endoftext|>", disallowed_special=())
    assert enc.encode("<|endoftext|>", allowed_special="all") == [50256]
    assert enc.decode([50256]) == ref.decode([50256]) == "<|endoftext|>"
    assert enc.encode_single_token("<|endoftext|>") == 50256
    assert b"<|endoftext|>" not in enc._mergeable_ranks


def test_p50k_edit_fim_tokens():
    enc, ref = bytepair.get_encoding("p50k_edit"), tiktoken_encoding("p50k_edit")
    text = "<|fim_prefix|>def f(<|fim_suffix|>):<|fim_middle|>"
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert [50281, 50283, 50282] == [i for i in enc.encode(text, allowed_special="all") if i > 50280]


def test_harmony_specials_and_shared_id():
    enc, ref = bytepair.get_encoding("o200k_harmony"), tiktoken_encoding("o200k_harmony")
    chat = "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hello<|return|>"
    assert enc.encode(chat, allowed_special="all") == ref.encode(chat, allowed_special="all")
    # two names share 200018, as in tiktoken; decoding gives the same one
    assert enc._special_tokens["<|endofprompt|>"] == enc._special_tokens["<|reserved_200018|>"] == 200018
    assert enc.decode([200018]) == ref.decode([200018])
    with pytest.raises(ValueError):
        enc.encode("<|call|>")


def _tiktoken_tables():
    model = optional("tiktoken.model")
    return model.MODEL_TO_ENCODING, model.MODEL_PREFIX_TO_ENCODING


def test_whole_model_table_matches_tiktoken():
    exact, prefixes = _tiktoken_tables()
    assert registry._MODELS == exact
    assert registry._MODEL_PREFIXES == list(prefixes.items())
    for m, name in exact.items():
        assert bytepair.encoding_name_for_model(m) == name
    for p, name in prefixes.items():
        for model in (p + "2025-01-01", p + "x"):
            import tiktoken

            assert bytepair.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model)


@pytest.mark.parametrize("model,name", [
    ("text-davinci-003", "p50k_base"), ("code-davinci-002", "p50k_base"), ("text-davinci-edit-001", "p50k_edit"),
    ("gpt-oss-120b", "o200k_harmony"), ("gpt-oss-20b", "o200k_harmony"), ("gpt-4.5-preview", "o200k_base"),
])
def test_models_of_new_encodings_load(model, name):
    enc = bytepair.encoding_for_model(model)
    assert enc.name == name and enc is bytepair.get_encoding(name)


def test_p50k_gap_is_a_core_gap_and_converts(tmp_path):
    enc = bytepair.get_encoding("p50k_base")
    assert enc.gaps == [50256] and enc.token_bytes_list[50256] == b""
    report = bytepair.convert("p50k_base", tmp_path / "p50k.json", to="hf")
    assert report.identical
    assert bytepair.load(tmp_path / "p50k.json").encode("x  = 1\n        y") == enc.encode("x  = 1\n        y")
