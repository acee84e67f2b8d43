"""Verified conversion (bytepair.convert), format detection (bytepair.load) and
the character-level tokenizer.json."""

from __future__ import annotations

import json
import os

import pytest
from test_hf_tokenizer_json import trained

import bytepair
from bytepair import conversion
from bytepair.errors import FormatError, UnsupportedComponentError
from bytepair.formats import detect, gpt2, hf_json, native
from bytepair.formats import tiktoken_ranks as tt_format
from conftest import optional

SHORT = "Hello, world! 안녕하세요 🎉 def f(x): return x**2  \n\n  12345 <|endoftext|>"
TARGETS = [("bytepair", "tok.json"), ("tiktoken", "tok.tiktoken"), ("hf", "tokenizer.json"), ("gpt2", "gpt2-dir")]


def _load_back(path, to, tok):
    if to == "tiktoken":
        return bytepair.load(path, pattern=tok.pattern, special_tokens=tok.special_tokens)
    if to == "gpt2":
        return bytepair.load(path, pattern=tok.pattern)
    return bytepair.load(path)


@pytest.mark.parametrize("to, name", TARGETS)
def test_convert_trained_tokenizer_to_every_target(tmp_path, to, name):
    tok = trained()
    dest = tmp_path / name
    report = bytepair.convert(tok, dest, to=to)
    assert report.identical and report.same_vocab and report.format == to
    assert report.n_vocab == tok.n_vocab and report.checked_tokens > 10_000
    assert all(os.path.isfile(f) for f in report.files)
    assert _load_back(dest, to, tok) == tok
    if to in ("hf", "gpt2", "tiktoken"):  # the real library also read the file (installed in CI)
        assert report.peer is not None and report.peer.split()[0] in ("tokenizers", "tiktoken")
    assert str(dest) in report.summary() and "identical ids" in report.summary()
    # only the outputs are left in the folder: no temporary files
    assert sorted(os.listdir(tmp_path)) == [name]


@pytest.mark.parametrize("to, name", TARGETS)
def test_convert_bundled_gpt2_to_every_target(tmp_path, to, name):
    report = bytepair.convert("gpt2", tmp_path / name, to=to, check_text=SHORT)
    assert report.source == "gpt2" and report.n_vocab == 50_257
    assert _load_back(tmp_path / name, to, bytepair.get_encoding("gpt2")) == bytepair.get_encoding("gpt2")


def test_convert_from_files_of_each_format(tmp_path):
    tok = trained()
    bytepair.convert(tok, tmp_path / "a.tiktoken", to="tiktoken", check_text=SHORT)
    # .tiktoken -> hf needs the pattern and specials
    with pytest.raises(FormatError, match="pattern="):
        bytepair.convert(tmp_path / "a.tiktoken", tmp_path / "b.json", to="hf", check_text=SHORT)
    assert not (tmp_path / "b.json").exists()
    r = bytepair.convert(tmp_path / "a.tiktoken", tmp_path / "b.json", to="hf",
                         pattern="o200k", special_tokens=tok.special_tokens, check_text=SHORT)
    assert r.source == str(tmp_path / "a.tiktoken")
    bytepair.convert(tmp_path / "b.json", tmp_path / "g", to="gpt2", check_text=SHORT)
    bytepair.convert(tmp_path / "g", tmp_path / "c.json", to="bytepair", pattern="o200k", check_text=SHORT)
    assert bytepair.load(tmp_path / "c.json") == tok
    r = bytepair.convert(tmp_path / "a.tiktoken", tmp_path / "n.json", to="bytepair", pattern="none", check_text=SHORT)
    assert bytepair.load(tmp_path / "n.json").pattern is None


def test_failed_verification_leaves_nothing(tmp_path, monkeypatch):
    tok = trained()
    # a re-loaded file that lost the merges and renumbered the specials
    other = bytepair.Tokenizer([bytes([b]) for b in range(256)], tok.pattern,
                               {s: 256 + k for k, s in enumerate(tok.special_tokens)})
    monkeypatch.setattr(conversion, "_reload", lambda *a: other)
    for to, name in TARGETS:
        with pytest.raises(conversion.ConversionError, match="not exact.*nothing was written"):
            bytepair.convert(tok, tmp_path / name, to=to, check_text=SHORT)
    assert os.listdir(tmp_path) == []
    # an existing file at the destination is left as it was
    (tmp_path / "keep.json").write_text("old", encoding="utf-8")
    with pytest.raises(conversion.ConversionError):
        bytepair.convert(tok, tmp_path / "keep.json", to="hf", check_text=SHORT)
    assert (tmp_path / "keep.json").read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["keep.json"]


def test_peer_disagreement_is_caught(tmp_path, monkeypatch):
    tok = trained()
    monkeypatch.setattr(conversion, "_peer_encoder", lambda *a: ("fake 1.0", lambda pieces: [0]))
    with pytest.raises(conversion.ConversionError, match="fake 1.0 gives different ids"):
        bytepair.convert(tok, tmp_path / "t.json", to="hf", check_text=SHORT)
    assert os.listdir(tmp_path) == []


def test_convert_argument_errors(tmp_path):
    tok = trained()
    with pytest.raises(ValueError, match="to must be one of"):
        bytepair.convert(tok, tmp_path / "x", to="sentencepiece")
    with pytest.raises(FileNotFoundError, match="not a bundled encoding"):
        bytepair.convert(tmp_path / "missing.json", tmp_path / "x", to="hf")
    with pytest.raises(TypeError, match="file sources only"):
        bytepair.convert(tok, tmp_path / "x", to="hf", pattern="gpt2")
    (tmp_path / "d").mkdir()
    with pytest.raises(FormatError, match="destination is a folder"):
        bytepair.convert(tok, tmp_path / "d", to="hf")
    assert bytepair.convert is conversion.convert


def test_check_text_counts_and_specials(tmp_path):
    tok = trained()
    report = bytepair.convert(tok, tmp_path / "t.json", to="bytepair", check_text="abc")
    # the specials are appended to the check text and encoded as specials
    text = "abc\n" + " ".join(sorted(tok.special_tokens, key=tok.special_tokens.get)) + "\n"
    assert report.checked_tokens == len(tok.encode(text, allowed_special="all"))


# ---------------------------------------------------------------- detection


def test_detect_every_format(tmp_path):
    tok = trained()
    native.save(tok, tmp_path / "n.json")
    hf_json.save(tok, tmp_path / "h.json")
    tt_format.save(tok, tmp_path / "ranks.txt")
    gpt2.save(tok, tmp_path / "g")
    (tmp_path / "hfdir").mkdir()
    hf_json.save(tok, tmp_path / "hfdir" / "tokenizer.json")
    assert detect(tmp_path / "n.json") == "bytepair"
    assert detect(tmp_path / "h.json") == "hf"
    assert detect(tmp_path / "ranks.txt") == "tiktoken"
    assert detect(tmp_path / "g") == "gpt2"
    assert detect(tmp_path / "g" / "merges.txt") == "gpt2"
    assert detect(tmp_path / "g" / "vocab.json") == "gpt2"
    assert detect(tmp_path / "hfdir") == "hf"
    assert bytepair.load(tmp_path / "hfdir") == tok
    (tmp_path / "other.json").write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(FormatError, match="not a tokenizer file bytepair knows"):
        bytepair.load(tmp_path / "other.json")
    (tmp_path / "other.bin").write_bytes(b"\x00\x01garbage")
    with pytest.raises(FormatError, match="unrecognised file"):
        bytepair.load(tmp_path / "other.bin")
    with pytest.raises(FormatError, match="neither"):
        bytepair.load(tmp_path)


def test_options_a_file_does_not_take_are_refused(tmp_path):
    tok = trained()
    native.save(tok, tmp_path / "n.json")
    hf_json.save(tok, tmp_path / "h.json")
    with pytest.raises(TypeError, match="does not take pattern.*stores its own"):
        bytepair.load(tmp_path / "n.json", pattern="gpt2")
    with pytest.raises(TypeError, match="does not take special_tokens"):
        bytepair.load(tmp_path / "h.json", special_tokens={"x": 1})


def test_native_format_is_versioned_and_readable(tmp_path):
    tok = trained()
    native.save(tok, tmp_path / "n.json")
    d = json.loads((tmp_path / "n.json").read_text(encoding="utf-8"))
    assert d["format"] == "bytepair" and d["version"] == 1
    assert "Ġthe" in d["vocab"] or any(s.startswith("Ġ") for s in d["vocab"])
    d["version"] = 99
    (tmp_path / "n.json").write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(FormatError, match=r"\$\.version.*version 99"):
        bytepair.load(tmp_path / "n.json")


# ---------------------------------------------------------------- character-level


def test_char_tokenizer_file_round_trip(tmp_path):
    tok = bytepair.CharTokenizer.train("low lower lowest", 4)
    tok.save(tmp_path / "tokenizer.json")
    d = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert set(d) == {"vocab", "merges"} and d["vocab"][0] == "\ufffd"
    assert detect(tmp_path / "tokenizer.json") == "char"
    back = bytepair.load(tmp_path / "tokenizer.json")
    assert isinstance(back, bytepair.CharTokenizer) and back == tok
    assert back.encode("lowest") == tok.encode("lowest")
    # docs/worked-examples.md A: 'low lower lowest' with 4 merges ends as 6 tokens
    assert len(back.encode("low lower lowest")) == 6


def test_char_tokenizer_cannot_become_byte_level(tmp_path):
    bytepair.CharTokenizer.train("abab", 1).save(tmp_path / "tokenizer.json")
    with pytest.raises(UnsupportedComponentError, match="character-level"):
        bytepair.convert(tmp_path / "tokenizer.json", tmp_path / "out.json", to="hf")
    assert not (tmp_path / "out.json").exists()


def test_file_the_peer_library_rejects_is_not_kept(tmp_path, monkeypatch):
    optional("tokenizers")
    from bytepair.formats import hf_json as hf_mod

    # a written pattern that tokenizers' regex engine cannot compile
    tok = trained()
    monkeypatch.setattr(hf_mod, "to_hf_pattern", lambda p: "(")
    monkeypatch.setattr(conversion, "_reload", lambda *a: tok)
    with pytest.raises(conversion.ConversionError, match="its own library cannot load it"):
        bytepair.convert(tok, tmp_path / "t.json", to="hf", check_text=SHORT)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("text", ["", " \n"])
def test_convert_refuses_a_check_text_with_nothing_to_check(tmp_path, text):
    with pytest.raises(bytepair.ConversionError, match="no text to verify"):
        bytepair.convert("gpt2", tmp_path / "g.tiktoken", to="tiktoken", check_text=text)
    assert not (tmp_path / "g.tiktoken").exists()
