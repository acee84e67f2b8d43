"""The ``bytepair`` executable run as a user types it (a fresh process per
command): flags that cannot apply are refused, errors are one line with exit
status 2 and name no Python exception type."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from conftest import DATA

_PYTHON_DIR = str(Path(bytepair.__file__).resolve().parent.parent)
_SCRIPT = shutil.which("bytepair", path=os.path.dirname(sys.executable))
_COMMAND = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "bytepair"]
#: Words that give away a Python exception type in a message.
_EXCEPTION_NAME = re.compile(r"\b\w*(Error|Exception)\b|Errno|Traceback")


def bytepair_cmd(*argv: str, stdin: str | bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs ``bytepair ARGV...`` in a new process (this checkout's package first on the path)."""
    # transformers' default verbosity (another test module lowers it for the whole session)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_PYTHON_DIR, os.environ.get("PYTHONPATH", "")]),
               NO_COLOR="1", PYTHONWARNINGS="default", TRANSFORMERS_VERBOSITY="warning")
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([*_COMMAND, *argv], input=data if data is not None else b"", capture_output=True,
                          env=env, cwd=cwd, timeout=300)


def refused(r: subprocess.CompletedProcess, *words: str) -> str:
    """Asserts a one-line user error (exit 2, no exception name) holding ``words``; returns it."""
    err = r.stderr.decode()
    assert r.returncode == 2, (r.returncode, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bytepair: error: "), err
    assert not _EXCEPTION_NAME.search(lines[0]), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def ok(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode()


@pytest.fixture(scope="module")
def small_tiktoken(tmp_path_factory) -> Path:
    """A 300-id tokenizer (299 ranks, <|endoftext|> at 299) written as a .tiktoken file."""
    folder = tmp_path_factory.mktemp("small")
    tok = bytepair.train((DATA / "en_kjv.txt").read_text(encoding="utf-8"), 300, pattern="o200k",
                         special_tokens=["<|endoftext|>"], progress=False)
    bytepair.convert(tok, folder / "small.tiktoken", to="tiktoken")
    return folder / "small.tiktoken"


# ---------------------------------------------------------------- --preset


def test_preset_whose_specials_do_not_fit_the_file_is_refused(small_tiktoken, tmp_path):
    out = tmp_path / "x.json"
    line = refused(bytepair_cmd("convert", str(small_tiktoken), str(out), "--to", "hf", "--preset", "cl100k_base"),
                   "299 ranks", "100257-100276")
    assert "--pattern" in line and not out.exists()
    refused(bytepair_cmd("count", "-t", str(small_tiktoken), "--preset", "cl100k_base", "--text", "hi"),
            "299 ranks")
    # the way the message points to: the file's own pattern and specials
    ok(bytepair_cmd("convert", str(small_tiktoken), str(out), "--to", "hf", "--pattern", "o200k",
                    "--special", "<|endoftext|>=299"))
    assert bytepair.load(out).special_tokens == {"<|endoftext|>": 299} and bytepair.load(out).n_vocab == 300


@pytest.fixture(scope="module")
def small_json(small_tiktoken) -> Path:
    """The same tokenizer as a bytepair JSON file (which stores its own pattern and specials)."""
    path = small_tiktoken.with_name("small.json")
    bytepair.convert(bytepair.load(small_tiktoken, pattern="o200k", special_tokens={"<|endoftext|>": 299}), path,
                     to="bytepair")
    return path


# ---------------------------------------------------------------- flags that cannot apply


def test_pattern_and_preset_are_refused_where_no_file_takes_them(small_tiktoken, small_json):
    refused(bytepair_cmd("encode", "-e", "gpt2", "--pattern", "(", "--text", "hi"), "--pattern", "-e gpt2")
    refused(bytepair_cmd("encode", "-e", "gpt2", "--preset", "cl100k_base", "--text", "hi"), "--preset", "-e gpt2")
    refused(bytepair_cmd("encode", "--pattern", "gpt2", "--text", "hi"), "-e o200k_base (the default)")
    refused(bytepair_cmd("extend", "-e", "gpt2", "--pattern", "o200k", "--add", "1", "--text", "hi hi"), "--pattern")
    refused(bytepair_cmd("sweep", "-e", "gpt2", "--pattern", "o200k", "--text", "hi"), "--pattern")
    refused(bytepair_cmd("encode", "-t", str(small_json), "--pattern", "gpt2", "--text", "hi"),
            "small.json is a bytepair file")
    refused(bytepair_cmd("encode-dataset", str(DATA / "en_kjv.txt"), "-o", "out", "-e", "gpt2", "--pattern", "gpt2"),
            "-e gpt2")
    # where a file takes the flag it applies to that file; an invalid regex is an error there
    out = ok(bytepair_cmd("count", "-e", "gpt2", "-t", str(small_tiktoken), "--pattern", "o200k", "--text", "hi"))
    assert "gpt2" in out and "small.tiktoken" in out
    refused(bytepair_cmd("encode", "-t", str(small_tiktoken), "--pattern", "(", "--text", "hi"))


def test_parity_options_need_parity(tmp_path):
    for flags in (["--parity-unit", "tokens"], ["--parity-global", "5"], ["--dev", f"en={DATA / 'en_kjv.txt'}"]):
        refused(bytepair_cmd("train", *flags, "--text", "hi hi", "-o", str(tmp_path / "t.json")),
                flags[0], "goes with --parity")
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("argv, flag", [
    (["pieces", "--limit", "-2", "--text", "hi"], "--limit"),
    (["count", "--limit", "-1", "--text", "hi"], "--limit"),
    (["count-chunks", "x.txt", "-o", "c.bpc", "--max-retries", "-1"], "--max-retries"),
    (["count-chunks", "x.txt", "-o", "c.bpc", "--workers", "0"], "--workers"),
    (["convert", "gpt2", "out", "--to", "transformers", "--model-max-length", "-5"], "--model-max-length"),
    (["convert", "gpt2", "out", "--to", "transformers", "--model-max-length", "0"], "--model-max-length"),
    (["extend", "--add", "1", "--threads", "0", "--text", "hi"], "--threads"),
    (["trace", "--merges", "-3", "--text", "hi"], "--merges"),
])
def test_numbers_out_of_range_are_refused(argv, flag, tmp_path):
    refused(bytepair_cmd(*argv, cwd=tmp_path), flag, "at least")
    assert not (tmp_path / "out").exists()


def test_argparse_errors_are_one_line():
    refused(bytepair_cmd("pieces", "--limit", "x"), "'bytepair pieces --help'")
    refused(bytepair_cmd("frobnicate"), "invalid choice")


def test_sweep_sizes_above_the_tokenizer_are_refused():
    refused(bytepair_cmd("sweep", "-e", "gpt2", "--sizes", "1000,60000", "--text", "hello"),
            "60,000 is above gpt2's n_vocab 50,257")


def test_chunk_takes_each_input_on_its_own_like_encode():
    r = bytepair_cmd("chunk", "-e", "gpt2", "--max-tokens", "50", "--text", "abc", "--text", "def")
    rows = [json.loads(line) for line in ok(r).splitlines()]
    assert [(c["index"], c["input"], c["text"], c["start"], c["end"]) for c in rows] == \
        [(0, "abc", "abc", 0, 3), (1, "def", "def", 0, 3)]
    assert ok(bytepair_cmd("encode", "-e", "gpt2", "--text", "abc", "--text", "def")).split("\n")[:2] == \
        ["39305", "4299"]
    refused(bytepair_cmd("truncate", "--max-tokens", "5", "--text", "abc", "--text", "def"), "one text", "2 inputs")


def test_encode_and_decode_take_a_character_level_tokenizer(tmp_path):
    path = tmp_path / "char.json"
    tok = bytepair.CharTokenizer.train("hello world " * 10, 5)
    tok.save(path)
    ids = tok.encode("hello there")
    assert ok(bytepair_cmd("encode", "-t", str(path), "--text", "hello there")).split() == [str(i) for i in ids]
    assert ok(bytepair_cmd("decode", "-t", str(path), *map(str, ids), "--json")).count(tok.decode(ids)) == 1
    refused(bytepair_cmd("encode", "-t", str(path), "--text", "hi", "--allow-special"), "--allow-special")


def test_convert_refuses_an_empty_check_text(tmp_path):
    (tmp_path / "empty.txt").write_text("\n")
    refused(bytepair_cmd("convert", "gpt2", str(tmp_path / "g.json"), "--to", "hf", "--check-text",
                         str(tmp_path / "empty.txt")), "no text to verify")
    assert not (tmp_path / "g.json").exists()


# ---------------------------------------------------------------- serve


def _serve_first_line(*argv: str) -> tuple[str, str]:
    """Starts ``bytepair serve ARGV`` on a free port, returns (its address line,
    stderr so far) and stops it with Ctrl-C (SIGINT)."""
    pytest.importorskip("uvicorn")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([*_COMMAND, "serve", "--port", "0", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        line = proc.stdout.readline().decode()  # printed with flush once the socket listens
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    return line, err.decode()


def test_serve_on_all_interfaces_says_so(small_tiktoken):
    line, err = _serve_first_line("--host", "0.0.0.0", "-e", "gpt2")
    assert line.startswith("bytepair serve: http://127.0.0.1:") and "listening on 0.0.0.0" in line
    assert "open to the network" in line
    assert "bytepair: warning: --host 0.0.0.0 opens the page to every machine" in err
    line, err = _serve_first_line("-e", "gpt2")
    assert "network" not in line and "opens the page" not in err


def test_serve_takes_a_tiktoken_file_with_pattern(small_tiktoken):
    line, err = _serve_first_line("-t", str(small_tiktoken), "--pattern", "o200k")
    assert "small.tiktoken" in line and "gpt2" in line, err
    line = refused(bytepair_cmd("serve", "--port", "0", "-t", str(small_tiktoken)), "--pattern")
    refused(bytepair_cmd("serve", "--port", "0", "-e", "gpt2", "--pattern", "o200k"), "-e gpt2")


def test_transformers_export_check_does_not_warn_but_the_user_still_is_warned(small_json, tmp_path):
    pytest.importorskip("transformers")
    out = tmp_path / "folder"
    r = bytepair_cmd("convert", str(small_json), str(out), "--to", "transformers", "--model-max-length", "16")
    assert "verified" in ok(r) and "longer than" not in r.stderr.decode()
    # the user's own call on a long text still gets transformers' warning, once
    code = (f"import transformers; t = transformers.AutoTokenizer.from_pretrained({str(out)!r}); "
            "t('hello ' * 100); t('hello ' * 100)")
    user = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300,
                          env=dict(os.environ, TRANSFORMERS_VERBOSITY="warning"))
    assert user.returncode == 0 and user.stderr.decode().count("longer than the specified maximum") == 1


# ---------------------------------------------------------------- one rendering of token bytes

PARTIAL = "' \\xed\\x86'"  # the token b" \xed\x86": a space and two of the three bytes of 토, as typed in Python


def test_partial_byte_tokens_show_the_same_in_every_command(tmp_path):
    text = " 토" * 200  # first merges: b" \xed", then b" \xed\x86"
    base = tmp_path / "base.json"
    out = ok(bytepair_cmd("train", "--text", text, "--pattern", "none", "--vocab-size", "260", "--special", "<s>",
                          "-q", "-o", str(tmp_path / "t.json")))
    assert f"first merges: ' \\xed', {PARTIAL}" in out
    info = json.loads(ok(bytepair_cmd("train", "--text", text, "--pattern", "none", "--vocab-size", "260",
                                      "--special", "<s>", "--json", "-o", str(tmp_path / "t.json"))))
    assert info["first_merges"][:2] == [" \\xed", " \\xed\\x86"]  # the same escapes, unquoted
    ok(bytepair_cmd("train", "--text", "ab ab ab", "--pattern", "none", "--vocab-size", "258", "--special", "<s>",
                    "-q", "-o", str(base)))
    out = ok(bytepair_cmd("extend", "-t", str(base), "--text", text, "--add", "3", "-q", "-o", str(tmp_path / "x.json")))
    assert f"first new tokens: ' \\xed', {PARTIAL}" in out
    info = json.loads(ok(bytepair_cmd("extend", "-t", str(base), "--text", text, "--add", "3", "--json",
                                      "-o", str(tmp_path / "x.json"))))
    assert info["first_new_tokens"][:2] == [" \\xed", " \\xed\\x86"]
    two = tmp_path / "two.json"  # two merges: " 토" is b" \xed\x86" + b"\xa0"
    ok(bytepair_cmd("train", "--text", text, "--pattern", "none", "--vocab-size", "259", "--special", "<s>", "-q",
                    "-o", str(two)))
    out = ok(bytepair_cmd("pieces", "-t", str(two), "--text", " 토"))
    assert f"{PARTIAL}" in out and "'\\xa0'" in out
    rows = json.loads(ok(bytepair_cmd("pieces", "-t", str(two), "--text", " 토", "--json")))
    assert [(p["text"], p["hex"]) for p in rows["pieces"]] == [(" \\xed\\x86", "20ed86"), ("\\xa0", "a0")]
    out = ok(bytepair_cmd("trace", "--text", text, "--merges", "2"))
    assert "' \\xed' + '\\x86'" in out and "\\\\" not in out


def test_count_json_has_one_shape_with_or_without_limit():
    plain = json.loads(ok(bytepair_cmd("count", "-e", "gpt2", "--text", "hello world", "--json")))
    limited = bytepair_cmd("count", "-e", "gpt2", "--text", "hello world", "--json", "--limit", "1")
    assert limited.returncode == 1  # over the limit
    over = json.loads(limited.stdout)
    assert plain == {"gpt2": {"tokens": 2, "limit": None, "over_limit": False}}
    assert over == {"gpt2": {"tokens": 2, "limit": 1, "over_limit": True}}


def test_encoding_help_lists_every_registry_encoding():
    names = bytepair.list_encoding_names()
    for command in ("encode", "count", "encode-dataset", "serve"):
        text = " ".join(ok(bytepair_cmd(command, "--help")).split())
        assert all(name in text for name in names), (command, text)
    ok(bytepair_cmd("encode", "-e", "p50k_edit", "--text", "hi"))


# ---------------------------------------------------------------- messages


def test_parity_names_an_empty_directory_as_one(tmp_path):
    (tmp_path / "adir").mkdir()  # a folder is read as train reads it: this one holds nothing
    line = refused(bytepair_cmd("parity", "--lang", f"en={tmp_path / 'adir'}"), "holds no files")
    assert "No such file" not in line


def test_one_shard_failures_are_one_plain_line(tmp_path):
    line = refused(bytepair_cmd("count-chunks", "nonexist.jsonl", "-o", "c.bpc", "--workers", "1", cwd=tmp_path))
    assert line == "bytepair: error: nonexist.jsonl: No such file or directory"
    (tmp_path / "z.jsonl").write_text('{"text": 5}\n')
    line = refused(bytepair_cmd("count-chunks", "z.jsonl", "-o", "c.bpc", "--workers", "1", cwd=tmp_path))
    assert line == "bytepair: error: z.jsonl:1: 'text' is a number, not a string"
    (tmp_path / "y.jsonl").write_text('{"text": "a\tb"}\n')
    line = refused(bytepair_cmd("count-chunks", "y.jsonl", "-o", "c.bpc", "--workers", "1", cwd=tmp_path))
    assert line == "bytepair: error: y.jsonl:1: invalid JSON: invalid control character at column 12"
    # several shards: one line each, the path once, "the other shards finished" only when some did
    (tmp_path / "ok.txt").write_text("fine text")
    r = bytepair_cmd("count-chunks", "z.jsonl", "y.jsonl", "ok.txt", "-o", "c.bpc", "--workers", "1", cwd=tmp_path)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.splitlines() == [
        "bytepair: error: 2 of the 3 shards failed:", "  z.jsonl:1: 'text' is a number, not a string",
        "  y.jsonl:1: invalid JSON: invalid control character at column 12",
        "  the other shards finished; fix or remove these and run again"]


def test_encode_dataset_output_that_is_a_file(tmp_path):
    (tmp_path / "doc.txt").write_text("hello")
    (tmp_path / "res_file").write_text("taken")
    refused(bytepair_cmd("encode-dataset", "doc.txt", "-o", "res_file", "-e", "gpt2", "--workers", "1", cwd=tmp_path),
            "res_file is a file, not a directory")


def test_decode_messages_name_the_bad_id_and_the_range():
    refused(bytepair_cmd("decode", "-e", "gpt2", "9906 abc"), "'abc' is not one", "spaces or commas")
    refused(bytepair_cmd("decode", "-e", "gpt2", "999999999"), "(ids are 0..50256)")
    refused(bytepair_cmd("decode", "-e", "gpt2", "50257"), "(ids are 0..50256)")
    refused(bytepair_cmd("decode", "-e", "gpt2", stdin="[1, x]"), "expecting value at line 1, column 5")


def test_json_errors_say_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": {"vocab": "a\tb"}}')
    refused(bytepair_cmd("count", "-t", str(bad), "--text", "hi"), "invalid control character at line 1, column 23")


# ---------------------------------------------------------------- combinations that cannot apply


def test_convert_refuses_source_options_the_source_cannot_take(small_json, small_tiktoken, tmp_path):
    out = tmp_path / "x.json"
    refused(bytepair_cmd("convert", "gpt2", str(out), "--to", "hf", "--pattern", "gpt2"), "gpt2 is a bundled encoding")
    refused(bytepair_cmd("convert", "gpt2", str(out), "--to", "hf", "--special", "a=5"), "--special")
    refused(bytepair_cmd("convert", str(small_json), str(out), "--to", "hf", "--pattern", "gpt2"),
            "small.json is a bytepair file")
    refused(bytepair_cmd("convert", str(small_json), str(out), "--to", "hf", "--preset", "gpt2"), "--preset")
    assert not out.exists()


@pytest.mark.parametrize("argv, words", [
    (["decode", "-e", "gpt2", "--stream", "--bytes", "31373"], ["--bytes", "--stream"]),
    (["decode", "-e", "gpt2", "--json", "--bytes", "31373"], ["--bytes", "--json"]),
    (["diff", "gpt2", "r50k_base", "--documents", "none"], ["--documents", "--text"]),
    (["count-chunks", "x.txt", "-o", "c.bpc", "--address", "ray://h:1"], ["--address", "--engine ray"]),
    (["encode-dataset", "x.txt", "-o", "out", "-e", "gpt2", "--address", "ray://h:1"], ["--address"]),
])
def test_flags_that_cannot_apply_together_are_refused(argv, words, tmp_path):
    refused(bytepair_cmd(*argv, cwd=tmp_path), *words)


def test_text_column_is_refused_for_plain_text_shards(tmp_path):
    (tmp_path / "a.txt").write_text("plain text")
    refused(bytepair_cmd("count-chunks", "a.txt", "-o", "c.bpc", "--text-column", "body", cwd=tmp_path),
            "--text-column", "plain text")
    (tmp_path / "b.jsonl").write_text('{"body": "json text"}\n')
    ok(bytepair_cmd("count-chunks", "b.jsonl", "-o", "c.bpc", "--text-column", "body", "--workers", "1",
                    cwd=tmp_path))


def test_train_from_counts_keeps_their_special_tokens(tmp_path):
    (tmp_path / "a.txt").write_text("one two three <|x|> four five " * 20)
    ok(bytepair_cmd("count-chunks", "a.txt", "-o", "c.bpc", "--special", "<|x|>", "--workers", "1", cwd=tmp_path))
    info = json.loads(ok(bytepair_cmd("train", "--counts", "c.bpc", "--vocab-size", "270", "--json", "-o", "t.json",
                                      cwd=tmp_path)))
    assert info["special_tokens"] == ["<|x|>"] and bytepair.load(tmp_path / "t.json").special_tokens == {"<|x|>": 269}
    refused(bytepair_cmd("train", "--counts", "c.bpc", "--special", "<|endoftext|>", "-o", "u.json", cwd=tmp_path),
            "differs from the special tokens c.bpc was counted with")
    refused(bytepair_cmd("train", "--counts", "c.bpc", "--threads", "2", "-o", "u.json", cwd=tmp_path), "--threads")
    assert not (tmp_path / "u.json").exists()


@pytest.mark.parametrize("command", [["diff", "gpt2", "r50k_base"], ["audit", "-e", "gpt2"]])
def test_text_limit_is_refused_with_json(command):
    refused(bytepair_cmd(*command, "--limit", "3", "--json"), "--limit", "--json")


def test_count_chunks_checks_the_pattern_once_not_per_shard(tmp_path):
    (tmp_path / "a.txt").write_text("text")
    line = refused(bytepair_cmd("count-chunks", "a.txt", "-o", "c.bpc", "--pattern", "(", "--workers", "1",
                                cwd=tmp_path), "invalid pre-tokenization pattern")
    assert "a.txt" not in line and "shard" not in line


def test_preset_hint_points_to_flags_the_command_has(small_tiktoken):
    line = refused(bytepair_cmd("count", "-t", str(small_tiktoken), "--preset", "gpt2", "--text", "a"))
    assert "--pattern" in line and "bytepair convert" in line and "ids from 299" in line
    assert "pattern=" not in line and "special_tokens=" not in line


def test_results_keyed_by_name_keep_every_input(small_json, tmp_path):
    for d in ("d1", "d2"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "small.json").write_bytes(small_json.read_bytes())
    counts = json.loads(ok(bytepair_cmd("count", "-t", "d1/small.json", "-t", "d2/small.json", "--text", "hello",
                                        "--json", cwd=tmp_path)))
    assert sorted(counts) == ["d1/small.json", "d2/small.json"]
    ids = json.loads(ok(bytepair_cmd("encode", "-e", "gpt2", "--text", "a", "--text", "a", "--json")))
    assert ids == {"a": [64], "a#2": [64]}


def test_evaluate_refuses_empty_text(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    refused(bytepair_cmd("evaluate", str(tmp_path / "empty.txt")), "empty")
