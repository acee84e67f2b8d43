"""``bytepair train --superword T``: the file equals ``bytepair.train(...,
superword=T)``, the summary counts tokens across spaces, and mistakes are
one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from conftest import run_cli as run

DATA = Path(__file__).parents[1] / "data"


@pytest.mark.parametrize("transition", ["0.6", "1500"])
def test_train_superword_equals_the_api(capsys, tmp_path, transition):
    src = DATA / "en_austen.txt"
    out = tmp_path / "sw.json"
    code, text, _ = run(capsys, "train", str(src), "--vocab-size", "2500", "--superword", transition,
                        "--max-words", "3", "-q", "-o", str(out))
    assert code == 0
    want = bytepair.train(src, 2500, superword=float(transition) if "." in transition else int(transition),
                          max_words=3, special_tokens=["<|endoftext|>"])
    got = bytepair.load(out)
    assert got.merges == want.merges
    assert "tokens across a space:" in text and "4 words" not in text


def test_train_superword_json(capsys, tmp_path):
    code, text, _ = run(capsys, "train", str(DATA / "en_kjv.txt"), "--vocab-size", "2000", "--superword", "0.5",
                        "--json", "-o", str(tmp_path / "sw.json"))
    assert code == 0
    info = json.loads(text)
    assert info["n_vocab"] == 2000 and info["superword_tokens"] > 0
    assert set(info["by_words"]) <= {"1", "2", "3", "4"}


@pytest.mark.parametrize("argv, message", [
    (["--superword", "x"], "vocabulary size"),
    (["--superword", "99999"], "between 256"),
    (["--superword", "0.5", "--max-words", "-1"], "--max-words"),
    (["--superword", "0.5", "--parity", "en=x"], "different trainings"),
])
def test_mistakes_are_usage_errors(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "train", "--text", "a b c", "--vocab-size", "300", "-o", str(tmp_path / "x.json"),
                       *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
