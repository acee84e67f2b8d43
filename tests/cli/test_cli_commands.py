"""The ``bytepair`` command line, run in-process on real text."""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest

import bytepair
from bytepair import cli
from bytepair.cli import encoding as cli_encode
from conftest import DATA, optional, tiktoken_encoding
from conftest import run_cli as run

# ---------------------------------------------------------------- encode / decode / count


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_encode_file_matches_tiktoken(capsys, name):
    path = DATA / "ko_prose.txt"
    text = path.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "encode", "-e", name, str(path))
    assert code == 0
    assert [int(x) for x in out.split()] == tiktoken_encoding(name).encode_ordinary(text)


def test_encode_stdin_and_json(capsys, monkeypatch):
    code, out, _ = run(capsys, "encode", "-e", "cl100k_base", "--json", stdin="hello world", monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out) == [15339, 1917]


def test_encode_special_text_is_plain_unless_allowed(capsys):
    _, out, _ = run(capsys, "encode", "-e", "cl100k_base", "--text", "<|endoftext|>")
    assert 100257 not in [int(x) for x in out.split()]
    _, out, _ = run(capsys, "encode", "-e", "cl100k_base", "--allow-special", "--text", "<|endoftext|>")
    assert out.split() == ["100257"]


def test_binary_input_is_refused_then_accepted_with_bytes(capsys, tmp_path):
    blob = bytes(range(256)) * 3 + "토큰".encode() + b"\xff\xfe tail"
    f = tmp_path / "blob.bin"
    f.write_bytes(blob)
    code, out, err = run(capsys, "encode", str(f))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not UTF-8" in err and "--bytes" in err and str(f) in err
    code, out, _ = run(capsys, "encode", "-e", "gpt2", "--bytes", str(f))
    assert code == 0
    ids = [int(x) for x in out.split()]
    assert bytepair.get_encoding("gpt2").decode_bytes(ids) == blob


def test_decode_roundtrip_and_stream_matches_seed_c(capsys, monkeypatch):
    _, out, _ = run(capsys, "decode", "-e", "gpt2", "--json", "169", "228", "254", "169", "223", "108")
    assert json.loads(out) == {"text": "토큰", "complete_utf8": True}
    _, out, _ = run(capsys, "decode", "-e", "gpt2", "--stream", "--json", "169,228,254,169,223,108")
    steps = json.loads(out)["steps"]
    assert [s["emitted"] for s in steps] == ["", "", "토", "", "", "큰"]
    assert [s["alone"] for s in steps] == ["\ufffd"] * 6
    _, out, _ = run(capsys, "decode", "-e", "gpt2", stdin="[47991, 250, 166, 113, 255, 168, 244, 112]",
                    monkeypatch=monkeypatch)
    assert out == "한국어"  # into a pipe: exactly the decoded bytes, no newline added


def test_decode_stream_plain_table(capsys):
    _, out, _ = run(capsys, "decode", "-e", "gpt2", "--stream", "47991", "250")
    lines = out.splitlines()
    assert lines[0].split() == ["id", "bytes", "decoded", "alone", "stream", "emits"]
    assert lines[-1] == "text: 한"


def test_decode_bad_ids(capsys):
    code, _, err = run(capsys, "decode", "-e", "gpt2", "12", "x")
    assert code == 2 and "whole numbers" in err
    code, _, err = run(capsys, "decode", "-e", "gpt2", "99999999")
    assert code == 2 and "99999999" in err


def test_count_several_encodings(capsys):
    code, out, _ = run(capsys, "count", "-e", "gpt2", "-e", "cl100k_base", "-e", "o200k_base",
                       "--text", "안녕하세요, 토크나이저입니다.", "--json")
    assert code == 0 and json.loads(out) == {name: {"tokens": n, "limit": None, "over_limit": False}
                                             for name, n in (("gpt2", 38), ("cl100k_base", 17), ("o200k_base", 10))}
    _, out, _ = run(capsys, "count", str(DATA / "en_kjv.txt"))
    text = (DATA / "en_kjv.txt").read_text(encoding="utf-8")
    assert out == f"{len(tiktoken_encoding('o200k_base').encode_ordinary(text))}\n"


def test_tokenizer_file(capsys, tmp_path):
    path = tmp_path / "tok.json"
    tok = bytepair.train((DATA / "en_austen.txt").read_text(encoding="utf-8")[:3000], 300, pattern="gpt2")
    tok.save(path)
    _, out, _ = run(capsys, "encode", "-t", str(path), "--text", "It is a truth")
    assert [int(x) for x in out.split()] == tok.encode("It is a truth")


# ---------------------------------------------------------------- inspection commands


def test_trace_command_prints_seed_a(capsys):
    code, out, _ = run(capsys, "trace", "--text", "low lower lowest", "--merges", "4")
    assert code == 0
    lines = out.splitlines()
    assert lines[1].endswith("16  l|o|w| |l|o|w|e|r| |l|o|w|e|s|t")
    assert lines[-1].endswith("6  low| lowe|r| lowe|s|t")
    assert "' low' + 'e'" in lines[-1]


def test_pieces_command_plain_and_colour(capsys):
    _, out, _ = run(capsys, "pieces", "-e", "gpt2", "--text", "토큰 ok")
    assert out.splitlines()[0] == "\\xed|\\x86|\\xa0|\\xed|\\x81|\\xb0| ok"
    assert "\x1b[" not in out
    assert out.count("partial") == 6 and "complete" in out
    _, out, _ = run(capsys, "--color", "always", "pieces", "-e", "gpt2", "--text", "토큰 ok")
    assert "\x1b[" in out


def test_pieces_html(capsys, tmp_path):
    out_file = tmp_path / "p.html"
    text = (DATA / "ko_prose.txt").read_text(encoding="utf-8")[:400] + " <|endoftext|>"
    code, out, _ = run(capsys, "pieces", "-e", "cl100k_base", "--allow-special", "--text", text,
                       "--html", str(out_file))
    assert code == 0 and "wrote" in out
    page = out_file.read_text(encoding="utf-8")
    ids = tiktoken_encoding("cl100k_base").encode(text, allowed_special="all")
    body = page.split('<p class="text">', 1)[1]
    assert body.count('class="t ') == len(ids)
    for i in ids[:20]:
        assert f" id {i} " in page
    assert page.count("partial UTF-8: part of a character") == sum(
        1 for i in ids if not _complete(tiktoken_encoding("cl100k_base").decode_single_token_bytes(i)))
    assert "special" in page and "<script" not in page and "http" not in page


def _complete(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_sweep_command_trains_once_and_truncates(capsys):
    code, out, _ = run(capsys, "sweep", "--pattern", "gpt2", "--merges", "0,6,12,24,48", "--json",
                       str(DATA / "en_kjv.txt"))
    assert code == 0
    rows = json.loads(out)["rows"]
    text = (DATA / "en_kjv.txt").read_text(encoding="utf-8")
    assert [r["merges"] for r in rows] == [0, 6, 12, 24, 48]
    assert [r["vocab_size"] for r in rows] == [256, 262, 268, 280, 304]
    assert rows[0]["tokens"] == len(text.encode())
    tok = bytepair.train(text, 280, pattern="gpt2")
    assert rows[3]["tokens"] == len(tok.encode_ordinary(text))


def test_sweep_and_compare_plots(capsys, tmp_path):
    optional("matplotlib")
    png = tmp_path / "sweep.png"
    code, out, _ = run(capsys, "sweep", "-e", "gpt2", "--sizes", "300,5000,50257", "--plot", str(png),
                       str(DATA / "en_austen.txt"))
    assert code == 0 and f"wrote {png}" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    png2 = tmp_path / "compare.png"
    code, out, _ = run(capsys, "compare", "--text", "Hello, this is a tokenizer.",
                       "--text", "안녕하세요, 토크나이저입니다.", "--plot", str(png2))
    assert code == 0 and png2.read_bytes()[:4] == b"\x89PNG"


def test_plot_without_matplotlib_says_how_to_get_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _out, err = run(capsys, "compare", "-e", "gpt2", "--text", "x", "--plot", str(tmp_path / "c.png"))
    assert code == 2 and "pip install 'bytepair[plot]'" in err and err.count("\n") == 1
    assert not (tmp_path / "c.png").exists()


def test_ranks_command(capsys):
    code, out, _ = run(capsys, "ranks", "-e", "gpt2", "--json", " the", " Minjun")
    rows = json.loads(out)["rows"]
    assert code == 0 and rows[0]["id"] == 262 and rows[0]["merge"] == 7
    assert rows[1]["id"] is None and "".join(rows[1]["pieces"]) == " Minjun"


def test_compare_command_json(capsys, tmp_path):
    en, ko = tmp_path / "en.txt", tmp_path / "ko.txt"
    en.write_text((DATA / "en_austen.txt").read_text(encoding="utf-8")[:3000], encoding="utf-8")
    ko.write_text((DATA / "ko_prose.txt").read_text(encoding="utf-8")[:3000], encoding="utf-8")
    code, out, _ = run(capsys, "compare", "-e", "gpt2", "-e", "o200k_base", str(en), str(ko), "--json")
    data = json.loads(out)
    assert code == 0 and data["texts"] == ["en.txt", "ko.txt"]
    for r in data["rows"]:
        text = (en if r["text"] == "en.txt" else ko).read_text(encoding="utf-8")
        assert r["tokens"] == len(tiktoken_encoding(r["tokenizer"]).encode_ordinary(text))


def test_evaluate_command(capsys):
    code, out, _ = run(capsys, "evaluate", "-e", "gpt2", "--json", str(DATA / "ko_prose.txt"))
    assert code == 0 and json.loads(out)[0]["byte_fallback_share"] > 0.5


# ---------------------------------------------------------------- train / convert


def test_train_on_text_file(capsys, tmp_path):
    out_file = tmp_path / "t.json"
    src = tmp_path / "corpus.txt"
    src.write_text((DATA / "en_austen.txt").read_text(encoding="utf-8")[:5000], encoding="utf-8")
    code, out, _ = run(capsys, "train", str(src), "--vocab-size", "300", "-o", str(out_file))
    assert code == 0 and "vocab size 300 = 256 bytes + 43 merges + 1 special" in out
    tok = bytepair.load(out_file)
    assert tok.n_vocab == 300 and tok.eot_token == 299


def test_train_from_counts(capsys, tmp_path):
    from bytepair.counts import ChunkCounts

    text = (DATA / "en_kjv.txt").read_text(encoding="utf-8")[:4000]
    counts = ChunkCounts.from_texts([text], pattern="gpt2", special_tokens=["<|endoftext|>"])
    counts.save(tmp_path / "c.bpc")
    code, out, _ = run(capsys, "train", "--counts", str(tmp_path / "c.bpc"), "--vocab-size", "280",
                       "-o", str(tmp_path / "t.json"), "--json")
    assert code == 0
    tok = bytepair.load(tmp_path / "t.json")
    assert tok.merges == bytepair.train(text, 280, pattern="gpt2", special_tokens=["<|endoftext|>"]).merges
    assert json.loads(out)["n_vocab"] == 280


def test_convert_is_wired(capsys, tmp_path):
    from bytepair.formats import tiktoken_ranks as tt_format

    code, _out, err = run(capsys, "convert", "gpt2", str(tmp_path / "gpt2.tiktoken"), "--to", "tiktoken")
    assert code == 0, err
    ranks = tt_format.parse_ranks((tmp_path / "gpt2.tiktoken").read_bytes())
    assert {b: i for i, b in enumerate(ranks) if b} == bytepair.get_encoding("gpt2").mergeable_ranks


def test_convert_tiktoken_input_takes_pattern_and_specials(capsys, tmp_path):
    tok = bytepair.train((DATA / "en_kjv.txt").read_text(encoding="utf-8")[:20000], 400, pattern="cl100k",
                         special_tokens=["<|endoftext|>"])
    from bytepair.formats import tiktoken_ranks as tt_format

    tt_format.save(tok, tmp_path / "t.tiktoken")
    code, _, err = run(capsys, "convert", str(tmp_path / "t.tiktoken"), str(tmp_path / "t.json"), "--to", "bytepair",
                       "--pattern", "cl100k", "--special", "<|endoftext|>=399")
    assert code == 0, err
    back = bytepair.load(tmp_path / "t.json")
    assert back.pattern == tok.pattern and back.special_tokens == {"<|endoftext|>": 399}
    code, _, err = run(capsys, "convert", str(tmp_path / "t.tiktoken"), str(tmp_path / "u.json"), "--to", "bytepair",
                       "--special", "oops")
    assert code == 2 and "TOKEN=ID" in err and not (tmp_path / "u.json").exists()


# ---------------------------------------------------------------- errors and conventions


def test_unknown_encoding_lists_the_available_ones(capsys):
    code, out, err = run(capsys, "count", "-e", "gpt5", "--text", "x")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "gpt5" in err and "cl100k_base" in err and "o200k_base" in err


def test_missing_file_names_the_path(capsys, tmp_path):
    missing = tmp_path / "nope.txt"
    code, _, err = run(capsys, "count", str(missing))
    assert code == 2 and str(missing) in err and "Traceback" not in err
    code, _, err = run(capsys, "encode", "-t", str(missing), "--text", "x")
    assert code == 2 and str(missing) in err


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(FileNotFoundError):
        cli.main(["--debug", "count", str(tmp_path / "nope.txt")])
    with pytest.raises(ValueError):
        cli.main(["count", "--debug", "-e", "gpt5", "--text", "x"])


def test_no_input_on_a_terminal_is_a_user_error(capsys, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    code, _, err = run(capsys, "count")
    assert code == 2 and "no input" in err


def test_one_tokenizer_commands_refuse_two(capsys):
    code, _, err = run(capsys, "encode", "-e", "gpt2", "-e", "o200k_base", "--text", "x")
    assert code == 2 and "one tokenizer" in err


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for c in ["train", "encode", "decode", "count", "pieces", "trace", "sweep", "ranks", "compare",
              "convert", "audit", "diff", "extend"]:
        assert f"\n    {c} " in out


def test_every_command_module_adds_its_own_names():
    from bytepair.cli import encoding, scale_out

    names: list = []
    for module in cli.COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        module.add_parsers(sub)
        names += list(sub.choices)
    assert len(names) == len(set(names)), names
    choices = cli.build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == set(names)
    assert choices["count"].get_default("func") is encoding.cmd_count
    assert choices["count-chunks"].get_default("func") is scale_out.cmd_count_chunks


# ---------------------------------------------------------------- long inputs


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_split_blocks_never_changes_the_ids(corpora, name):
    tt = tiktoken_encoding(name)
    for corpus, text in corpora.items():
        text = text[:25000]
        blocks = cli_encode.split_blocks(text, 700)
        assert "".join(blocks) == text
        assert len(blocks) > 3 or len(text) < 5000, corpus
        ids = [i for b in blocks for i in tt.encode_ordinary(b)]
        assert ids == tt.encode_ordinary(text), f"{corpus}: a cut changed the ids"


def test_split_blocks_on_hostile_whitespace():
    tt = tiktoken_encoding("gpt2")
    text = "a  \nb\n\nc \n d\n" * 300 + "x\n" * 300
    blocks = cli_encode.split_blocks(text, 50)
    assert len(blocks) > 10
    assert [i for b in blocks for i in tt.encode_ordinary(b)] == tt.encode_ordinary(text)


def test_long_input_in_a_terminal_shows_progress_and_same_ids(capsys, monkeypatch):
    text = (DATA / "en_pydocs.txt").read_text(encoding="utf-8")
    monkeypatch.setattr(cli_encode, "BLOCK_CHARS", 4000)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    code, out, err = run(capsys, "encode", "-e", "cl100k_base", str(DATA / "en_pydocs.txt"))
    assert code == 0 and "encoding" in err  # the bar's label
    assert [int(x) for x in out.split()] == tiktoken_encoding("cl100k_base").encode_ordinary(text)
    code, out, _ = run(capsys, "count", "-e", "gpt2", str(DATA / "en_pydocs.txt"))
    assert int(out) == len(tiktoken_encoding("gpt2").encode_ordinary(text))


def test_plot_labels_fall_back_when_no_font_has_the_characters(monkeypatch):
    optional("matplotlib")
    from bytepair.render import plot

    labels = ["Hello, this is a toke…", "안녕하세요"]
    monkeypatch.setattr(plot, "_font_covering", lambda needed: None)
    shown, font, replaced = plot.labels_and_font(labels)
    assert shown == ["Hello, this is a toke…", "text 2"] and font is None and replaced
    monkeypatch.setattr(plot, "_font_covering", lambda needed: "/some/font.ttf")
    assert plot.labels_and_font(labels) == (labels, "/some/font.ttf", False)
    assert plot.labels_and_font(["plain ascii"]) == (["plain ascii"], None, False)
