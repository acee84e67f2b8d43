"""A superword tokenizer survives every file format: bytepair's JSON and
``tokenizer.json`` load back equal, and Hugging Face ``tokenizers`` and
``transformers`` give bytepair's ids on every document of the six corpora."""

from __future__ import annotations

import os
import warnings

import pytest

import bytepair
from bytepair.formats import hf_json
from conftest import CORPORA, corpus, optional

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="module")
def superword():
    text = "".join(corpus(n) for n in CORPORA)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train(text, 6000, superword=0.5, special_tokens=["<|endoftext|>"])


def test_native_file_loads_back_equal(superword, tmp_path):
    path = tmp_path / "sw.json"
    superword.save(path)
    back = bytepair.load(path)
    assert back == superword
    assert back.encode(corpus("en_austen.txt")) == superword.encode(corpus("en_austen.txt"))


def test_tokenizer_json_gives_hf_ids_on_every_document(superword, tmp_path):
    tokenizers = optional("tokenizers")
    path = tmp_path / "tokenizer.json"
    hf_json.save(superword, path, merges="minimal")
    assert bytepair.load(path) == superword
    hf = tokenizers.Tokenizer.from_file(str(path))
    for name in CORPORA:
        docs = corpus(name).split("\n\n")
        ours = superword.encode_batch(docs, disallowed_special=())
        theirs = [e.ids for e in hf.encode_batch(docs, add_special_tokens=False)]
        assert ours == theirs, name
    assert hf.encode("a <|endoftext|> b").ids == superword.encode("a <|endoftext|> b", allowed_special="all")


@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning")
def test_transformers_folder_gives_the_same_ids(superword, tmp_path):
    transformers = optional("transformers")
    out = tmp_path / "folder"
    bytepair.convert(superword, out, to="transformers")
    auto = transformers.AutoTokenizer.from_pretrained(str(out), local_files_only=True)
    for name in CORPORA:
        text = corpus(name)[:8000]
        assert auto.encode(text, add_special_tokens=False) == superword.encode(text, disallowed_special=())
