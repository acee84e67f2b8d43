"""One training pipeline: ``train_report`` (what the CLI calls) agrees with
``train``, ``Inputs`` reads the same whether given as a value or as keywords,
and parity training has an entry point of its own."""

from __future__ import annotations

import json
import pathlib

import pytest

import bytepair
from bytepair import reference
from bytepair.counts import ChunkCounts, count_chunks
from bytepair.documents import Inputs
from bytepair.errors import ShrinkError, TrainingError
from bytepair.parity import learn_parity, train_parity
from bytepair.training import train_report

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def _text(name: str, n: int = 40_000) -> str:
    return (DATA / name).read_text(encoding="utf-8")[:n]


def test_train_report_gives_train_tokenizer_and_figures_from_the_text():
    text = _text("en_austen.txt")
    tok = bytepair.train(text, 600, pattern="gpt2", progress=False)
    run = train_report(text, 600, pattern="gpt2", progress=False)
    assert run.tokenizer == tok and run.tokenizer.merges == tok.merges
    # the figures are those of the text itself, measured independently
    want = reference.count_chunks([text], bytepair.patterns.GPT2)
    assert run.chunks == len(want)
    assert run.bytes == len(text.encode("utf-8"))
    assert run.tokens == len(tok.encode_ordinary(text))
    assert run.bytes_per_token == run.bytes / run.tokens
    assert run.seconds == run.counting_seconds + run.merging_seconds > 0


def test_train_report_from_counts_leaves_the_counts_usable():
    counts = ChunkCounts.from_texts([_text("en_kjv.txt")], pattern="gpt2")
    before = counts.as_dict()
    run = train_report(counts=counts, vocab_size=400, progress=False)
    assert counts.as_dict() == before and run.counting_seconds == 0.0
    assert run.tokenizer == bytepair.train(counts=counts, vocab_size=400, progress=False)


def test_inputs_value_and_keywords_read_the_same(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"body": "one two one\\n\\ntwo three"}\n', encoding="utf-8")
    path = tmp_path / "a.jsonl"
    as_value = count_chunks(path, pattern=None, inputs=Inputs(text_field="body", documents="\n\n"))
    as_keywords = count_chunks(path, pattern=None, text_field="body", documents="\n\n")
    assert as_value == as_keywords and as_value.as_dict() == {b"one two one": 1, b"two three": 1}
    tok = bytepair.train(path, 260, pattern=None, inputs=Inputs(text_field="body", documents="\n\n"))
    assert tok == bytepair.train(path, 260, pattern=None, text_field="body", documents="\n\n")
    # the keywords refine a value given too
    assert count_chunks(path, pattern=None, inputs=Inputs(text_field="body"), documents="\n\n") == as_value


def test_unknown_keywords_and_bad_inputs_are_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument 'text_colum'"):
        bytepair.train("abc", 260, text_colum="body")
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        count_chunks("abc", colour="red")
    with pytest.raises(TypeError, match="inputs must be a bytepair.Inputs"):
        bytepair.train("abc", 260, inputs={"text_column": "body"})  # type: ignore[arg-type]
    with pytest.raises(TrainingError, match="text_column") as ei:
        Inputs(text_column="")
    assert ei.value.argument == "text_column"
    with pytest.raises(TrainingError, match="memory_limit") as ei:
        bytepair.train("abc", 260, memory_limit="lots")
    assert ei.value.argument == "memory_limit"


def test_shrink_reads_its_sample_as_train_does_and_refuses_counting_options(tmp_path):
    base = bytepair.get_encoding("gpt2")
    text = _text("en_austen.txt", 5_000)
    (tmp_path / "s.jsonl").write_text(json.dumps({"body": text}) + "\n", encoding="utf-8")
    from_file = bytepair.shrink(base, tmp_path / "s.jsonl", keep=400, inputs=Inputs(text_field="body"))
    from_text = bytepair.shrink(base, text, keep=400)
    assert from_file[0] == from_text[0]
    with pytest.raises(ShrinkError, match="cache_dir") as ei:
        bytepair.shrink(base, text, keep=400, cache_dir=tmp_path)
    assert ei.value.argument == "cache_dir"


def test_extend_takes_the_same_inputs(tmp_path):
    (tmp_path / "k.jsonl").write_text('{"t": "안녕하세요 안녕하세요 안녕"}\n' * 5, encoding="utf-8")
    via_file = bytepair.extend("gpt2", tmp_path / "k.jsonl", add=3, text_field="t", progress=False)
    via_text = bytepair.extend("gpt2", ["안녕하세요 안녕하세요 안녕"] * 5, add=3, progress=False)
    assert via_file.merges == via_text.merges


def test_train_parity_is_the_parity_spelling_of_train():
    langs = {"en": _text("en_austen.txt", 6_000), "ko": _text("ko_prose.txt", 6_000)}
    tok = train_parity(langs, 320, parity_unit="chars", global_merges=5, pattern="gpt2", progress=False)
    old = bytepair.train(None, 320, objective="parity", languages=langs, parity_unit="chars",
                         parity_global_merges=5, pattern="gpt2", progress=False)
    assert tok.merges == old.merges
    assert learn_parity(langs, 320, parity_unit="chars", global_merges=5, pattern="gpt2",
                        progress=False)[0].merges == tok.merges
    with pytest.raises(TypeError, match="dev= are for objective='parity'"):
        bytepair.train("abc", 260, dev=langs)
