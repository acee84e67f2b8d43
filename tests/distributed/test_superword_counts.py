"""Superword training on counts made elsewhere: word counts and span counts
(``pattern="superword"``) from :func:`bytepair.distributed.count_chunks` train
with ``train(counts=..., span_counts=..., superword=T)`` to the merges of
training on the documents; the CLI does the same with ``count-chunks --pattern
superword`` and ``train --counts --span-counts``; mismatched tables are refused.
The Ray twin is in test_distributed_ray.py."""

from __future__ import annotations

import warnings

import pytest
from test_distributed_local import SPECIALS, make_shards, real_documents

import bytepair
from bytepair.counts import ChunkCounts
from bytepair.distributed import count_chunks
from bytepair.errors import TrainingError
from conftest import run_cli

#: A real-text prefix: the first documents of the committed corpora.
PREFIX = 400


def one_machine(docs, vocab_size, transition, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # small corpora may run out of pairs
        return bytepair.train(docs, vocab_size, superword=transition, special_tokens=SPECIALS, **kw)


def on_counts(words, spans, vocab_size, transition, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train(counts=words, span_counts=spans, vocab_size=vocab_size, superword=transition, **kw)


def test_local_engine_counts_train_like_the_documents(tmp_path):
    paths, docs = make_shards(tmp_path, 6, seed=7, docs=real_documents()[:PREFIX])
    want = one_machine(docs, 3000, 0.6, max_words=3)
    words = count_chunks(paths, special_tokens=SPECIALS, workers=2, progress=False)
    spans = count_chunks(paths, pattern="superword", special_tokens=SPECIALS, workers=2, progress=False)
    assert spans.pattern == bytepair.patterns.SUPERWORD
    n_spans = len(spans)
    got = on_counts(words, spans, 3000, 0.6, max_words=3)
    assert len(want.merges) > 2000
    assert got.merges == want.merges and got.special_tokens == want.special_tokens
    # the caller's span counts are theirs: stage 2 frees only spans it counted itself
    assert len(spans) == n_spans > 0
    assert on_counts(words, spans, 3000, 0.6, max_words=3).merges == want.merges
    assert got.pattern == want.pattern == bytepair.patterns.SUPERWORD
    cached = one_machine(paths, 3000, 0.6, max_words=3, cache_dir=tmp_path / "cache")
    assert cached.merges == want.merges


def test_mismatched_tables_are_refused():
    docs = ["the cat sat on the mat. the dog sat on the log."] * 3
    words = ChunkCounts.from_texts(docs, pattern="o200k", special_tokens=SPECIALS)
    spans = ChunkCounts.from_texts(docs, pattern="superword", special_tokens=SPECIALS)
    with pytest.raises(TrainingError, match="pattern='superword'") as e:
        on_counts(words, words, 300, 280)
    assert e.value.argument == "span_counts"
    other = ChunkCounts.from_texts(docs, pattern="superword")
    with pytest.raises(TrainingError, match="same special tokens"):
        on_counts(words, other, 300, 280)
    with pytest.raises(TrainingError, match="same special tokens"):
        on_counts(words, spans, 300, 280, special_tokens=["<|x|>"])
    with pytest.raises(TypeError, match="not both"):
        bytepair.train(docs, 300, counts=words, span_counts=spans, superword=280)
    with pytest.raises(TypeError, match="span_counts"):
        on_counts(words, None, 300, 280)
    with pytest.raises(TrainingError, match="pattern"):
        on_counts(words, spans, 300, 280, pattern="gpt2")


def test_cli_counts_then_trains_like_the_files(tmp_path, capsys):
    paths, _ = make_shards(tmp_path, 3, seed=11, docs=real_documents()[:PREFIX])
    shards = [str(p) for p in paths]
    w, s, out = tmp_path / "w.bpc", tmp_path / "s.bpc", tmp_path / "sw.json"
    assert run_cli(capsys, "count-chunks", *shards, "-o", str(w), "--workers", "2", "--no-progress")[0] == 0
    code, text, _ = run_cli(capsys, "count-chunks", *shards, "-o", str(s), "--pattern", "superword", "--workers", "2",
                            "--no-progress")
    assert code == 0 and f"--span-counts {s} --superword T" in text
    code, text, err = run_cli(capsys, "train", "--counts", str(w), "--span-counts", str(s), "--superword", "0.6",
                              "--vocab-size", "2500", "-q", "-o", str(out))
    assert code == 0, err
    assert "tokens across a space:" in text
    want = run_cli(capsys, "train", *shards, "--superword", "0.6", "--vocab-size", "2500", "-q", "-o",
                   str(tmp_path / "direct.json"))
    assert want[0] == 0
    assert bytepair.load(out).merges == bytepair.load(tmp_path / "direct.json").merges
    for argv, says in [(["--counts", str(w)], "--span-counts FILE"),
                       (["--counts", str(w), "--span-counts", str(s), shards[0]], "not both"),
                       (["--counts", str(w), "--span-counts", str(s), "--threads", "2"], "--threads"),
                       (["--counts", str(w), "--span-counts", str(w)], "--pattern 'superword'")]:
        code, _, err = run_cli(capsys, "train", *argv, "--superword", "0.6", "--vocab-size", "2500", "-q",
                               "-o", str(tmp_path / "x.json"))
        lines = [ln for ln in err.splitlines() if ln.startswith("bytepair:")]
        assert code == 2 and len(lines) == 1 and says in lines[0], err
    code, _, err = run_cli(capsys, "train", "--counts", str(w), "--span-counts", str(s), "--vocab-size", "2500",
                           "-o", str(tmp_path / "x.json"))
    assert code == 2 and "--span-counts goes with --superword" in err, err
    assert not (tmp_path / "x.json").exists()
