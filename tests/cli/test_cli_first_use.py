"""The command line as a first-time user meets it: training input, output paths
checked before work starts, progress bars, special-token text, pipes, messages
and argument errors. Run in-process like tests/cli/test_cli_commands.py."""

from __future__ import annotations

import io
import json
import os
import sys
import warnings

import pytest

import bytepair
from bytepair import cli
from bytepair.counts import ChunkCounts, input_size
from bytepair.errors import FormatError, TrainingError
from conftest import DATA
from conftest import run_cli as run

EN = str(DATA / "en_kjv.txt")


# ---------------------------------------------------------------- train input


def test_train_empty_text_is_an_error(capsys, tmp_path):
    code, _, err = run(capsys, "train", "--text", "", "-o", str(tmp_path / "t.json"))
    assert code == 2 and "--text is empty" in err
    assert not (tmp_path / "t.json").exists()


def test_train_text_and_file_uses_both(capsys, tmp_path):
    out_path = tmp_path / "t.json"
    code, out, _ = run(capsys, "train", "--text", "zqzqzq zqzqzq", EN, "--vocab-size", "300", "-q", "-o", str(out_path))
    assert code == 0 and "en_kjv.txt" in out and "--text" in out
    n_file = (DATA / "en_kjv.txt").stat().st_size
    assert f"({n_file + len('zqzqzq zqzqzq'):,} bytes)" in out


def test_train_dash_reads_stdin(capsys, monkeypatch, tmp_path):
    out_path = tmp_path / "t.json"
    code, out, _ = run(capsys, "train", "-", "--vocab-size", "260", "-q", "-o", str(out_path),
                       stdin="hello hello hello world", monkeypatch=monkeypatch)
    assert code == 0 and "trained on <stdin> (23 bytes)" in out
    assert bytepair.load(out_path).decode(bytepair.load(out_path).encode("hello")) == "hello"


# ---------------------------------------------------------------- output paths checked first


@pytest.mark.parametrize("bad", ["/nonexistent-bytepair-dir/x.json", "DIR"])
def test_train_bad_output_fails_before_training_naming_the_path(capsys, tmp_path, monkeypatch, bad):
    target = str(tmp_path) if bad == "DIR" else bad
    calls = []
    monkeypatch.setattr(bytepair, "train", lambda *a, **k: calls.append(1))
    code, _, err = run(capsys, "train", EN, "-o", target)
    assert code == 2 and calls == []  # refused before any training
    assert target in err and ".tmp" not in err and ".bytepair-" not in err


def test_save_and_convert_name_the_real_path(tmp_path):
    tok = bytepair.train("the cat sat " * 20, 260, pattern="gpt2")
    for bad in ("/nonexistent-bytepair-dir/x.json", str(tmp_path)):
        with pytest.raises(OSError) as e:
            tok.save(bad)
        assert e.value.filename == bad
        with pytest.raises((OSError, FormatError)) as e:
            bytepair.convert("gpt2", bad, to="bytepair")
        assert bad in str(e.value) and ".tmp" not in str(e.value) and ".bytepair-" not in str(e.value)


# ---------------------------------------------------------------- progress lines


def test_progress_lines_end_at_100_percent_and_count_bytes(capsys):
    from bytepair.progress import TrainProgress

    text = "한국어 텍스트 " * 10
    assert input_size(text) == len(text.encode("utf-8"))  # bytes, not characters
    p = TrainProgress(True, total_bytes=input_size(text))
    p.counting()(50, 0)
    p.counted(input_size(text))
    merge = p.merging(1000)
    merge(0, 730)  # the heap ran dry at 730 of 1000 merges
    p.merged(730)
    p.close()
    err = capsys.readouterr().err
    lines = [ln for ln in err.replace("\r", "\n").splitlines() if ln.strip()]
    last_count = [ln for ln in lines if ln.startswith("counting")][-1]
    last_merge = [ln for ln in lines if ln.startswith("merging")][-1]
    assert "100%" in last_count and "100%" in last_merge, (last_count, last_merge)
    assert "730/730" in last_merge


def test_training_that_stops_early_ends_its_lines_full(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bytepair.train((DATA / "en_kjv.txt").read_text() * 4, 100_000, pattern="gpt2", progress=True)
    err = capsys.readouterr().err.replace("\r", "\n")
    lines = [ln for ln in err.splitlines() if ln.startswith(("counting", "merging"))]
    for kind in ("counting", "merging"):
        last = [ln for ln in lines if ln.startswith(kind)]
        assert last and "100%" in last[-1], (kind, err)  # each phase ends with a final line


# ---------------------------------------------------------------- --counts with --pattern


def test_counts_with_a_different_pattern_is_refused(capsys, tmp_path):
    counts = ChunkCounts.from_texts([(DATA / "en_kjv.txt").read_text()], pattern="cl100k")
    path = tmp_path / "c.bpc"
    counts.save(path)
    code, _, err = run(capsys, "train", "--counts", str(path), "--pattern", "gpt2", "-o", str(tmp_path / "t.json"))
    assert code == 2 and "--pattern gpt2 differs" in err and "cl100k" in err
    code, _, _ = run(capsys, "train", "--counts", str(path), "--pattern", "gpt4", "-q", "--vocab-size", "300",
                     "-o", str(tmp_path / "t.json"))
    assert code == 0  # the same pattern (an alias of it) is fine
    with pytest.raises(TrainingError, match="differs from the pattern the counts"):
        bytepair.train(counts=counts, vocab_size=300, pattern="gpt2")
    assert bytepair.train(counts=counts, vocab_size=300).pattern == bytepair.patterns.CL100K


# ---------------------------------------------------------------- train(str naming a file)


def test_train_on_a_str_that_names_a_file_warns(tmp_path):
    f = tmp_path / "corpus.txt"
    f.write_text("the cat sat on the mat " * 20)
    with pytest.warns(UserWarning, match=r"also the name of a file.*pathlib\.Path"):
        bytepair.train(str(f), 260, pattern="gpt2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bytepair.train(f, 260, pattern="gpt2")  # a Path: the file, no warning


# ---------------------------------------------------------------- -t FILE.tiktoken, binary hints


def test_tiktoken_file_takes_pattern_and_preset_flags(capsys, tmp_path):
    path = tmp_path / "ko.tiktoken"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = bytepair.train((DATA / "ko_prose.txt").read_text()[:3000], 300, pattern="gpt2")
    bytepair.convert(tok, path, to="tiktoken")
    code, _, err = run(capsys, "count", "-t", str(path), "--text", "안녕")
    assert code == 2 and "--pattern" in err and "--preset" in err and "pattern=" not in err
    want = tok.encode_ordinary("대한민국 헌법")
    code, out, _ = run(capsys, "count", "-t", str(path), "--pattern", "gpt2", "--text", "대한민국 헌법")
    assert code == 0 and int(out) == len(want)
    code, out, _ = run(capsys, "encode", "-t", str(path), "--pattern", "gpt2", "--text", "대한민국 헌법")
    assert [int(x) for x in out.split()] == want
    # gpt2's <|endoftext|> is id 50256, after its 50,256 ranks: it does not fit a 300-rank file
    code, _, err = run(capsys, "count", "-t", str(path), "--preset", "gpt2", "--text", "x")
    assert code == 2 and "ranks but preset 'gpt2' has 50,256" in err
    shard = tmp_path / "doc.txt"
    shard.write_text("대한민국 헌법")
    code, _, err = run(capsys, "encode-dataset", str(shard), "-o", str(tmp_path / "out"), "-t", str(path),
                       "--workers", "1")
    assert code == 2 and "--preset" in err
    code, _, err = run(capsys, "encode-dataset", str(shard), "-o", str(tmp_path / "out"), "-t", str(path),
                       "--pattern", "gpt2", "--workers", "1")
    assert code == 2 and "--no-eot" in err and "append_eot" not in err  # the file has no <|endoftext|>
    code, _, err = run(capsys, "encode-dataset", str(shard), "-o", str(tmp_path / "out"), "-t", str(path),
                       "--pattern", "gpt2", "--no-eot", "--workers", "1")
    assert code == 0, err


def test_binary_input_hint_fits_the_command(capsys, tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(b"\xff\xfe\x00 binary")
    for command in ("count", "pieces", "evaluate"):
        code, _, err = run(capsys, command, str(f))
        assert code == 2 and "not UTF-8" in err
        assert "pass --bytes" not in err and "bytepair encode --bytes" in err
    code, _, err = run(capsys, "encode", str(f))
    assert code == 2 and "pass --bytes" in err


# ---------------------------------------------------------------- special-token text


@pytest.mark.parametrize("command", [["count"], ["compare"], ["evaluate"], ["pieces", "--json"], ["encode"],
                                     ["sweep", "--sizes", "300,50257"]])
def test_special_text_is_plain_text_everywhere_unless_allowed(capsys, command):
    text = "hello <|endoftext|> world"
    code, out, err = run(capsys, *command, "-e", "gpt2", "--text", text)
    assert code == 0, err
    code2, out2, err2 = run(capsys, *command, "-e", "gpt2", "--allow-special", "--text", text)
    assert code2 == 0, err2
    assert out != out2  # the flag makes it the special token


def test_count_values_for_special_text(capsys):
    text = "hi <|endoftext|> there"
    gpt2 = bytepair.get_encoding("gpt2")
    _, out, _ = run(capsys, "count", "-e", "gpt2", "--text", text)
    assert int(out) == len(gpt2.encode_ordinary(text))
    _, out, _ = run(capsys, "count", "-e", "gpt2", "--allow-special", "--text", text)
    assert int(out) == len(gpt2.encode(text, allowed_special="all"))


# ---------------------------------------------------------------- encode | decode


def test_encode_decode_pipe_round_trips_byte_for_byte(capsys, monkeypatch):
    for name in ("ko_prose.txt", "code_python.txt"):
        raw = (DATA / name).read_bytes()
        _, ids, _ = run(capsys, "encode", "-e", "o200k_base", str(DATA / name))
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(ids.encode()), encoding="utf-8"))
        code = cli.main(["decode", "-e", "o200k_base"])
        out = capsys.readouterr().out
        assert code == 0 and out.encode("utf-8") == raw
    _, out, _ = run(capsys, "decode", "-e", "gpt2", "15496")  # "Hello": nothing added into a pipe
    assert out == "Hello"


# ---------------------------------------------------------------- messages


def test_capped_vocab_is_one_cli_warning_line(capsys, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # as outside pytest (which turns warnings into errors)
        code, _, err = run(capsys, "train", "--text", "ab ab ab", "--vocab-size", "400", "-q", "-o", str(tmp_path / "t.json"))
    assert code == 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: warning: the corpus supports only")
    assert "UserWarning" not in err and "site-packages" not in err and ".py:" not in err
    assert "min_frequency=" not in err and "--min-frequency 1" in err


def test_messages_speak_cli_and_list_failed_shards_one_per_line(capsys, tmp_path):
    shards = []
    for i in range(3):
        p = tmp_path / f"part-{i}.jsonl"
        p.write_text(json.dumps({"content": "hello"}) + "\n")
        shards.append(str(p))
    code, _, err = run(capsys, "count-chunks", *shards, "-o", str(tmp_path / "c.bpc"), "--workers", "1")
    assert code == 2
    assert "text_column=" not in err and "--text-column" in err
    lines = err.strip().splitlines()
    assert sum("part-" in ln for ln in lines) == 3, err  # one line per failed shard
    code, _, err = run(capsys, "count", "-e", "gpt3", "--text", "x")
    assert code == 2 and "(for a tokenizer file use -t FILE)" in err and "bytepair.load" not in err


# ---------------------------------------------------------------- surrogates, argument types


def test_train_treats_lone_surrogates_like_encode():
    tok = bytepair.train("a\ud800b " * 20, 259, pattern="gpt2")  # repaired to U+FFFD, not a UnicodeEncodeError
    same = bytepair.train("a\ufffdb " * 20, 259, pattern="gpt2")
    assert tok == same
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")


def test_sweep_and_truncate_type_errors_say_what_was_expected():
    from bytepair.inspect import sweep

    gpt2 = bytepair.get_encoding("gpt2")
    with pytest.raises(TypeError, match=r"sizes must be a list of int.*sweep\(source, sizes, eval_text\)"):
        sweep(gpt2, "some text", [300, 1000])  # eval_text and sizes swapped
    with pytest.raises(TypeError, match=r"sizes must be whole numbers \(int\), got float 300\.5"):
        sweep(gpt2, [300.5], "text")
    with pytest.raises(TypeError, match=r"vocab_size must be a whole number \(int\), got float 1000\.5"):
        gpt2.truncate(1000.5)


# ---------------------------------------------------------------- small things


def test_bare_bytepair_prints_help_and_version(capsys):
    code, out, _ = run(capsys)
    assert code == 0 and "usage: bytepair" in out and "train" in out
    assert cli.main(["--version"]) == 0 and capsys.readouterr().out.strip() == f"bytepair {bytepair.__version__}"


def test_encode_two_texts_encodes_both(capsys):
    code, out, _ = run(capsys, "encode", "-e", "gpt2", "--text", "a", "--text", "b")
    assert code == 0 and out.splitlines() == ["64", "65"]


def test_threads_zero_is_refused_in_cli_and_api(capsys):
    assert cli.main(["train", "--threads", "0", "--text", "abc"]) == 2
    assert "--threads must be at least 1" in capsys.readouterr().err
    with pytest.raises(TrainingError, match="num_threads"):
        bytepair.train("abc abc", 258, num_threads=0)


def test_load_of_an_encoding_name_hints_get_encoding(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"bytepair\.get_encoding\('gpt2'\)"):
        bytepair.load("gpt2")
    code, _, err = run(capsys, "count", "-t", "gpt2", "--text", "x")
    assert code == 2 and "use -e gpt2" in err


@pytest.mark.parametrize("content", ["[1, 2, 3]", '"a string"', "42"])
def test_valid_json_that_is_no_tokenizer_is_not_called_not_json(tmp_path, content):
    f = tmp_path / "x.json"
    f.write_text(content)
    with pytest.raises(FormatError) as e:
        bytepair.load(f)
    assert "not JSON" not in str(e.value) and "JSON" in str(e.value)


def test_train_summary_is_tidy(capsys, tmp_path):
    code, out, _ = run(capsys, "train", "--text", "안녕 안녕 안녕 안녕", "--vocab-size", "260", "--pattern", "none", "-q",
                       "-o", str(tmp_path / "t.json"))
    assert code == 0
    assert "1 special token\n" in out and "special tokens" not in out
    first = next(ln for ln in out.splitlines() if ln.startswith("first merges:"))
    assert "\ufffd" not in first and "\\x" in first  # partial characters shown as bytes
    code, out, _ = run(capsys, "train", "--text", "abc", "--vocab-size", "257", "--special", "<s>", "-q",
                       "-o", str(tmp_path / "t2.json"))
    assert code == 0 and "first merges: (none)" in out and "0 merges + 1 special token" in out


# ---------------------------------------------------------------- pieces on big inputs


def test_pieces_limit_and_terminal_default(capsys, monkeypatch):
    text = (DATA / "en_kjv.txt").read_text()
    n = len(bytepair.get_encoding("gpt2").encode_ordinary(text))
    code, out, _ = run(capsys, "pieces", "-e", "gpt2", "--limit", "5", str(DATA / "en_kjv.txt"))
    assert code == 0 and f"gpt2: {n:,} tokens" in out and "(the first 5 shown)" in out
    assert out.split("\n\n")[0].count("|") == 4
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # a terminal: a screenful by default
    code, out, _ = run(capsys, "--color", "never", "pieces", "-e", "gpt2", str(DATA / "en_kjv.txt"))
    table = out.split("\n\n", 1)[1]
    assert code == 0 and len(table.splitlines()) < 60 and "more tokens" in out


def test_pieces_into_a_pipe_streams_everything(capsys):
    text = (DATA / "en_kjv.txt").read_text()
    ids = bytepair.get_encoding("gpt2").encode_ordinary(text)
    code, out, _ = run(capsys, "pieces", "-e", "gpt2", str(DATA / "en_kjv.txt"))
    assert code == 0
    first, table = out.split("\n\n", 1)
    assert first.count("|") == len(ids) - 1
    rows = [ln for ln in table.splitlines()[2:]]
    assert len(rows) == len(ids) and rows[-1].split()[0] == str(len(ids) - 1)


def test_no_env_leak():
    assert "BYTEPAIR_FAKE" not in os.environ


# ---------------------------------------------------------------- patterns from the command line


def test_pattern_names_on_the_command_line(capsys, tmp_path):
    code, _, err = run(capsys, "train", EN, "--pattern", "the", "-o", str(tmp_path / "t.json"))
    assert code == 2 and "unknown pattern name 'the'" in err and "gpt4" in err
    assert not (tmp_path / "t.json").exists()
    code, _, err = run(capsys, "count-chunks", EN, "-o", str(tmp_path / "c.bpc"), "--pattern", "GPT4",
                         "--workers", "1")
    assert code == 0, err
    counts = ChunkCounts.load(tmp_path / "c.bpc")
    assert len(counts) > 1000 and counts.pattern == bytepair.patterns.CL100K
    assert sum(len(c) * n for c, n in counts.items()) == (DATA / "en_kjv.txt").stat().st_size
    code, _, _ = run(capsys, "train", EN, "--pattern", "(?:the)", "--vocab-size", "300", "-q",
                       "-o", str(tmp_path / "t.json"))
    assert code == 0
    tok = bytepair.load(tmp_path / "t.json")
    assert tok.decode(tok.encode("the cat sat on the mat")) == "the cat sat on the mat"
