"""``convert(..., to="transformers")`` / ``bytepair convert tok.json out_dir --to
transformers``: the folder loads in transformers (``PreTrainedTokenizerFast``
and ``AutoTokenizer``, offline, no model weights) and gives bytepair's ids, with
bos/eos/pad from the special tokens named."""

from __future__ import annotations

import json
import os

import pytest

import bytepair
from bytepair.cli import main
from conftest import CORPORA, corpus, optional

os.environ["HF_HUB_OFFLINE"] = "1"  # no network, ever
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
transformers = optional("transformers")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning",
                                        "ignore::UserWarning")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("tok")
    text = corpus("en_austen.txt")[:60000] + corpus("ko_prose.txt")[:20000]
    tok = bytepair.train([text], vocab_size=700, special_tokens=["<s>", "</s>", "<pad>"])
    path = d / "tok.json"
    tok.save(path)
    return tok, path


def _load(folder):
    fast = transformers.PreTrainedTokenizerFast.from_pretrained(str(folder), local_files_only=True)
    auto = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return fast, auto


def test_trained_tokenizer_cli(trained, tmp_path):
    tok, path = trained
    out = tmp_path / "out_dir"
    assert main(["convert", str(path), str(out), "--to", "transformers", "--bos", "<s>", "--eos", "</s>",
                 "--pad", "<pad>"]) == 0
    assert sorted(os.listdir(out)) == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    fast, auto = _load(out)
    for name in CORPORA:
        text = corpus(name)[:5000] + " <s> x </s><pad>"
        want = tok.encode(text, allowed_special="all")
        assert fast.encode(text) == want
        assert auto(text)["input_ids"] == want
        assert fast.encode(text, add_special_tokens=False) == want
        assert fast.decode(want) == text
    specials = tok.special_tokens
    assert (fast.bos_token, fast.eos_token, fast.pad_token) == ("<s>", "</s>", "<pad>")
    assert (auto.bos_token_id, auto.eos_token_id, auto.pad_token_id) == (specials["<s>"], specials["</s>"],
                                                                         specials["<pad>"])
    batch = fast(["a b", "a longer text"], padding=True)
    assert batch["input_ids"][0][-1] == specials["<pad>"]
    assert json.loads((out / "special_tokens_map.json").read_text()) == {
        "bos_token": "<s>", "eos_token": "</s>", "pad_token": "<pad>"}


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_bundled_encodings(name, tmp_path):
    enc = bytepair.get_encoding(name)
    out = tmp_path / name
    report = bytepair.convert(name, out, to="transformers", eos_token="<|endoftext|>", model_max_length=8192)
    assert report.peer and report.peer.startswith("transformers")
    fast, auto = _load(out)
    for c in CORPORA:
        text = corpus(c)[:4000]
        assert fast.encode(text) == enc.encode(text) == auto.encode(text)
    assert fast.eos_token_id == enc.eot_token and fast.bos_token is None
    assert fast.model_max_length == 8192
    # every special token is special to transformers too (kept whole, skipped by skip_special_tokens)
    assert set(fast.all_special_tokens) == set(enc.special_tokens)
    s = "a<|endoftext|>b"
    assert fast.decode(enc.encode(s, allowed_special="all"), skip_special_tokens=True) == "ab"


def test_bad_roles(trained, tmp_path):
    tok, path = trained
    with pytest.raises(bytepair.FormatError, match="not a special token"):
        bytepair.convert(tok, tmp_path / "x", to="transformers", bos_token="<bos>")
    assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="transformers target only"):
        bytepair.convert(tok, tmp_path / "y.json", to="hf", eos_token="</s>")
    assert main(["convert", str(path), str(tmp_path / "z"), "--to", "hf", "--eos", "</s>"]) == 2
