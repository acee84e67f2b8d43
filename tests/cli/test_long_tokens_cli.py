"""Training on a corpus of one repeated character through the real
executable: the tokens it builds are bounded by default (``--max-token-length``,
256 bytes), the summary cuts long tokens, and the peak memory it prints
includes writing the tokenizer (the OS's own figure for the process)."""

from __future__ import annotations

import json
import os
import subprocess

from cli_run import EXE, bytepair_cli

import bytepair

DEFAULT_MAX_TOKEN_LENGTH = 256  # the documented default (docs/training.md)


def test_default_max_token_length_bounds_tokens_and_the_summary(tmp_path):
    corpus = tmp_path / "a.txt"
    corpus.write_text("a" * 2_000_000, encoding="utf-8")
    out = tmp_path / "t.json"
    r = bytepair_cli("train", str(corpus), "--vocab-size", "300", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tok = bytepair.load(out)
    longest = max(len(tok.decode_single_token_bytes(i)) for i in range(256, 256 + len(tok.merges)))
    assert longest <= DEFAULT_MAX_TOKEN_LENGTH
    assert out.stat().st_size < 100_000
    assert all(len(line) < 300 for line in r.stdout.splitlines()), r.stdout
    # lifted: the tokens grow to the run, and the summary still cuts them
    r = bytepair_cli("train", str(corpus), "--vocab-size", "300", "-o", str(out), "--max-token-length", "none",
                     cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tok = bytepair.load(out)
    assert max(len(tok.decode_single_token_bytes(i)) for i in range(256, 256 + len(tok.merges))) > 100_000
    first = next(line for line in r.stdout.splitlines() if line.startswith("first merges"))
    assert len(first) < 600 and "bytes)" in first, first


def test_api_and_reference_share_the_default():
    from bytepair import reference

    text = "a" * 3000 + " " + "b" * 700
    tok = bytepair.train(text, 280, pattern=None)
    merges, vocab, _ = reference.train(text, 280, pattern=None)
    assert [tok.decode_single_token_bytes(256 + k) for k in range(len(tok.merges))] == \
        [vocab[256 + k] for k in range(len(merges))]
    assert max(len(vocab[256 + k]) for k in range(len(merges))) == DEFAULT_MAX_TOKEN_LENGTH
    unbounded = bytepair.train(text, 280, pattern=None, max_token_length=None)
    assert max(len(unbounded.decode_single_token_bytes(i)) for i in range(256, unbounded.n_vocab)) > 256


def test_peak_memory_includes_saving(tmp_path):
    """Tokens of megabytes (limit lifted): writing them is the run's peak."""
    corpus = tmp_path / "a.txt"
    corpus.write_text("a" * 20_000_000, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(bytepair.__file__)))
    with open(tmp_path / "out", "wb") as out, open(tmp_path / "err", "wb") as err:
        p = subprocess.Popen([str(EXE), "train", str(corpus), "--vocab-size", "300", "-o", str(tmp_path / "t.json"),
                              "--json", "--max-token-length", "none"], stdout=out, stderr=err, env=env, cwd=tmp_path)
        _, status, usage = os.wait4(p.pid, 0)  # this child's own peak
        p.returncode = os.waitstatus_to_exitcode(status)
    assert p.returncode == 0, (tmp_path / "err").read_text()
    real = usage.ru_maxrss * 1024
    printed = json.loads((tmp_path / "out").read_text())["peak_memory_bytes"]
    assert printed >= 0.9 * real, (printed, real)
