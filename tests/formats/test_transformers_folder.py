"""``bytepair.load(folder)`` on a ``transformers`` folder: ``tokenizer.json`` read with
``tokenizer_config.json`` as ``AutoTokenizer`` reads them (the real models' folders are
in ``test_open_models.py``; these are small folders built here, checked against
``transformers`` itself, offline)."""

from __future__ import annotations

import json
import os
import pickle

import pytest

import bytepair
from bytepair.errors import UnsupportedComponentError
from bytepair.formats import hf_folder, hf_json
from bytepair.formats.hf_tokenizer import PipelineTokenizer
from conftest import corpus, optional

os.environ["HF_HUB_OFFLINE"] = "1"  # no network, ever
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")


@pytest.fixture(scope="module")
def tok():
    text = corpus("en_austen.txt")[:40000] + corpus("ko_prose.txt")[:10000]
    return bytepair.train([text], vocab_size=600, special_tokens=["<s>", "</s>"])


def _folder(tmp_path, tok, config):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tokenizer.json").write_text(hf_json.dumps(tok), encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return tmp_path


def _ids(ours, text, add):
    """A folder read as the file (a rank Tokenizer: bytepair's own export, no
    post-processor) reads special tokens with ``allowed_special="all"``."""
    if isinstance(ours, PipelineTokenizer):
        return ours.encode(text, add_special_tokens=add)
    return ours.encode(text, allowed_special="all")


TEXTS = ["Hello world <s> and </s>", "a <extra> b<extra>c", "  two  spaces\n\nand lines", "한국어 문장입니다 <s>"]


@pytest.mark.parametrize("config", [
    {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>"},
    {"tokenizer_class": "PreTrainedTokenizerFast", "additional_special_tokens": ["<extra>"]},
    {"tokenizer_class": "GPT2Tokenizer", "bos_token": "<s>", "eos_token": "</s>", "add_bos_token": True},
    {"tokenizer_class": "Qwen2TokenizerFast", "eos_token": "</s>", "extra_special_tokens": {"x": "<extra>"}},
])
def test_folder_gives_autotokenizer_ids(tmp_path, tok, config):
    transformers = optional("transformers")
    folder = _folder(tmp_path, tok, config)
    ours = bytepair.load(folder)
    ref = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    texts = TEXTS + [corpus("en_pydocs.txt")[:3000], corpus("multi_unicode.txt")[:3000]]
    for add in (True, False):
        assert [_ids(ours, t, add) for t in texts] == \
               [ref.encode(t, add_special_tokens=add) for t in texts], (config, add)


def test_config_token_gets_the_next_id_and_survives_pickling(tmp_path, tok):
    folder = _folder(tmp_path, tok, {"tokenizer_class": "TokenizersBackend", "eos_token": "<new>"})
    ours = bytepair.load(folder)
    assert isinstance(ours, PipelineTokenizer)
    new_id = ours.n_vocab - 1
    assert new_id == max(tok.special_tokens.values()) + 1
    assert ours.encode("a<new>b")[1] == new_id
    again = pickle.loads(pickle.dumps(ours))
    assert again == ours and again.encode("a<new>b") == ours.encode("a<new>b")
    assert again != bytepair.load(folder / "tokenizer.json")


def test_folder_without_changes_reads_the_file(tmp_path, tok):
    folder = _folder(tmp_path, tok, {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "</s>"})
    assert bytepair.load(folder) == tok


@pytest.mark.parametrize("config, where", [
    ({"tokenizer_class": "BloomTokenizer"}, "tokenizer_class"),
    ({"tokenizer_class": "PreTrainedTokenizerFast", "auto_map": {"AutoTokenizer": ["x.Y", None]}}, "auto_map"),
    ({"tokenizer_class": "PreTrainedTokenizerFast", "split_special_tokens": True}, "split_special_tokens"),
])
def test_what_is_not_emulated_is_refused(tmp_path, tok, config, where):
    folder = _folder(tmp_path, tok, config)
    with pytest.raises(UnsupportedComponentError, match=where) as e:
        bytepair.load(folder)
    assert "tokenizer_config.json" in str(e.value)
    assert hf_folder.with_config({"added_tokens": []}, {"tokenizer_class": "TokenizersBackend"}, "x") is None
