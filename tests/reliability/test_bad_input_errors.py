"""Bad input through the public API: each case raises a clear
exception (a ValueError subclass from bytepair.errors, or the OS error for a
missing file) that names the problem and, for files, the path; and nothing
half-written is left on disk."""

from __future__ import annotations

import json
import os

import pytest

import bytepair
from bytepair import CharTokenizer
from bytepair.errors import FormatError, PatternError, TrainingError
from bytepair.formats import native


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A valid bytepair tokenizer file and its JSON content."""
    path = tmp_path_factory.mktemp("tok") / "tok.json"
    tok = bytepair.train("hello world hello there " * 5, 262, pattern="gpt2", special_tokens=["<|endoftext|>"])
    tok.save(path)
    return tok, path.read_bytes()


# --------------------------------------------------------------------------- empty corpus


@pytest.mark.parametrize("data", ["", [], ["", ""], iter([])])
def test_empty_corpus(data):
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train(data, 300)


def test_corpus_of_only_special_tokens_is_empty():
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train("<s><s>", 300, special_tokens=["<s>"])


def test_empty_file(tmp_path):
    p = tmp_path / "empty.txt"
    p.write_bytes(b"")
    with pytest.raises(TrainingError, match="empty"):
        bytepair.train(p, 300)


def test_char_tokenizer_empty_text():
    with pytest.raises(TrainingError, match="empty"):
        CharTokenizer.train("", 5)


# --------------------------------------------------------------------------- vocab size


@pytest.mark.parametrize("size,specials,least", [
    (255, [], 256), (0, [], 256), (-5, [], 256), (256, ["<s>"], 257), (257, ["<a>", "<b>"], 258)])
def test_vocab_size_too_small(size, specials, least):
    with pytest.raises(TrainingError, match=f"at least .*{least}"):
        bytepair.train("some text", size, special_tokens=specials)


@pytest.mark.parametrize("size", [300.0, "300", None, True])
def test_vocab_size_not_an_int(size):
    with pytest.raises(TypeError, match="vocab_size"):
        bytepair.train("some text", size)


def test_char_vocab_size_below_alphabet():
    with pytest.raises(TrainingError, match="at least 4"):
        CharTokenizer.train("abc", vocab_size=3)  # 1 (unknown) + 3 characters
    with pytest.raises(TrainingError, match=">= 0"):
        CharTokenizer.train("abc", -1)


def test_vocab_size_exactly_the_minimum_is_fine():
    tok = bytepair.train("abc", 257, special_tokens=["<s>"])
    assert tok.n_vocab == 257 and tok.merges == []


# --------------------------------------------------------------------------- patterns


@pytest.mark.parametrize("pattern", ["(", "[a-", r"\p{NoSuchClass}", "a{2,1}", "(?<=a+)b"])
def test_invalid_regex(pattern):
    # "(?<=a+)b" is valid for Python's regex module but not for the core's engine:
    # it must fail up front, before any training (and without a warning)
    with pytest.raises(PatternError, match="pattern") as e:
        bytepair.train("some text", 300, pattern=pattern)
    assert isinstance(e.value, ValueError)
    assert pattern in str(e.value) or repr(pattern) in str(e.value)


def test_pattern_not_a_string():
    with pytest.raises(TypeError, match="pattern"):
        bytepair.train("some text", 300, pattern=5)  # type: ignore[arg-type]


def test_invalid_regex_in_tokenizer():
    with pytest.raises(PatternError):
        bytepair.Tokenizer([bytes([b]) for b in range(256)], pattern="(")


# --------------------------------------------------------------------------- special tokens


@pytest.mark.parametrize("specials,message", [
    (["<s>", "<s>"], "twice"),
    ([1], "not a str"),
    ([b"<s>"], "not a str"),
    (["<s>", None], "not a str"),
    ([""], "empty"),
    ("<s>", "list"),
])
def test_bad_special_tokens(specials, message):
    with pytest.raises(TrainingError, match=message):
        bytepair.train("some text", 300, special_tokens=specials)


# --------------------------------------------------------------------------- training files


def test_non_utf8_file_names_path(tmp_path):
    p = tmp_path / "latin1.txt"
    p.write_bytes("café crème".encode("latin-1"))
    for data in (p, [p], [tmp_path / "ok.txt", p]):
        (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
        with pytest.raises(TrainingError, match="UTF-8") as e:
            bytepair.train(data, 300)
        assert str(p) in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        bytepair.train(tmp_path / "missing.txt", 300)
    assert "missing.txt" in str(e.value)


def test_bytes_are_not_text():
    with pytest.raises(TypeError, match="decode"):
        bytepair.train(b"some text", 300)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        bytepair.train([b"some text"], 300)  # type: ignore[list-item]


# --------------------------------------------------------------------------- tokenizer files


def _write(tmp_path, name, content):
    p = tmp_path / name
    p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return p


def _edit(raw, fn):
    d = json.loads(raw)
    fn(d)
    return json.dumps(d, ensure_ascii=False)


def test_good_file_loads(tmp_path, saved):
    tok, raw = saved
    assert bytepair.load(_write(tmp_path, "tok.json", raw)) == tok


@pytest.mark.parametrize("cut", [0, 1, 10, 100, -2])
def test_truncated_file(tmp_path, saved, cut):
    _, raw = saved
    p = _write(tmp_path, "cut.json", raw[:cut])
    with pytest.raises(FormatError, match="truncated") as e:
        bytepair.load(p)
    assert str(p) in str(e.value)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d.update(version="1"), "version"),
    (lambda d: d.pop("version"), "version"),
    (lambda d: d.update(format="other"), "not a bytepair tokenizer"),
    (lambda d: d.pop("vocab"), "vocab"),
    (lambda d: d.update(vocab="abc"), "vocab"),
    (lambda d: d["vocab"].__setitem__(258, 5), "byte-level"),
    (lambda d: d["vocab"].__setitem__(258, "☃"), "byte-level"),
    (lambda d: d["merges"].__setitem__(0, [1, 2]), "merge"),
    (lambda d: d["merges"].__setitem__(0, "x"), "merge"),
    (lambda d: d["merges"].pop(), "merges"),
    (lambda d: d.update(special_tokens=[]), "special_tokens"),
    (lambda d: d.update(special_tokens={"<|endoftext|>": 3}), "id"),
    (lambda d: d.update(pattern="("), "pattern"),
])
def test_malformed_file_names_path(tmp_path, saved, edit, message):
    _, raw = saved
    p = _write(tmp_path, "bad.json", _edit(raw, edit))
    with pytest.raises(FormatError, match=message) as e:
        bytepair.load(p)
    assert str(p) in str(e.value)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize("content", [b"", b"[]", b"null", b"\xff\xfe{}", b'{"format": "bytepair"'])
def test_not_a_tokenizer_file(tmp_path, content):
    p = _write(tmp_path, "x.json", content)
    with pytest.raises(FormatError) as e:
        bytepair.load(p)
    assert str(p) in str(e.value)


def test_missing_tokenizer_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        bytepair.load(tmp_path / "nope.json")
    with pytest.raises(FileNotFoundError):
        CharTokenizer.load(tmp_path / "nope.json")


def test_char_file_is_not_a_bytepair_file(tmp_path):
    p = tmp_path / "tokenizer.json"
    CharTokenizer.train("abab", 1).save(p)
    with pytest.raises(FormatError, match="not a bytepair tokenizer") as e:
        native.load(p)  # bytepair.load detects the format and reads it as a CharTokenizer
    assert str(p) in str(e.value)


def test_bytepair_file_is_not_a_char_file(tmp_path, saved):
    _, raw = saved
    p = _write(tmp_path, "tok.json", raw)
    with pytest.raises(FormatError) as e:
        CharTokenizer.load(p)
    assert str(p) in str(e.value)


# --------------------------------------------------------------------------- nothing half-written


def test_failed_save_keeps_old_file(tmp_path, saved, monkeypatch):
    _, raw = saved
    p = _write(tmp_path, "tok.json", raw)
    other = bytepair.train("completely different text", 260, pattern=None)

    def boom(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="simulated"):
        other.save(p)
    with pytest.raises(OSError, match="simulated"):
        CharTokenizer.train("abab", 1).save(p)
    monkeypatch.undo()
    assert p.read_bytes() == raw
    assert os.listdir(tmp_path) == ["tok.json"]  # no temporary file left behind


def test_save_to_missing_folder_or_folder_path(tmp_path, saved):
    tok, _ = saved
    with pytest.raises(OSError):
        tok.save(tmp_path / "no" / "such" / "dir" / "tok.json")
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError):
        tok.save(tmp_path / "adir")
    assert sorted(os.listdir(tmp_path)) == ["adir"]
    assert os.listdir(tmp_path / "adir") == []


def test_cli_train_failure_writes_nothing(tmp_path, capsys):
    from bytepair.cli import main

    bad = _write(tmp_path, "bad.txt", "caf\xe9".encode("latin-1"))
    out = tmp_path / "out.json"
    assert main(["train", str(bad), "-o", str(out), "--vocab-size", "300"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "UTF-8" in err
    assert main(["train", str(tmp_path / "missing.txt"), "-o", str(out)]) == 2
    assert main(["train", str(bad), "-o", str(out), "--vocab-size", "10"]) == 2
    assert sorted(os.listdir(tmp_path)) == ["bad.txt"]
