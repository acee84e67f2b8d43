"""What a user is told: empty or undecodable input refused, each message naming
the flag that was typed, a progress line in a log, and SIGTERM during the final
write leaving no temporary file. Driven through the real executable."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from cli_run import EXE, bytepair_cli

import bytepair
from bytepair.errors import ShrinkError
from conftest import DATA

TEXT = (DATA / "en_kjv.txt").read_text(encoding="utf-8")[:30_000]


def _one_line_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    return r.stderr


# ---------------------------------------------------------------- silent acceptance


def test_shrink_on_an_empty_sample_is_refused(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    r = bytepair_cli("shrink", "-e", "gpt2", "empty.txt", "--keep", "1000", "-o", "s.json", cwd=tmp_path)
    _one_line_error(r, "empty")
    assert not (tmp_path / "s.json").exists()
    with pytest.raises(ShrinkError, match="empty"):
        bytepair.shrink(bytepair.get_encoding("gpt2"), [""], keep=1000)


@pytest.mark.parametrize("argv,flag", [
    (["count", "-e", "gpt2", "--text", "ab\udcffcd"], "--text"),
    (["train", "--text", "hello hello", "--special", "\udcff", "--vocab-size", "300", "-q", "-o", "t.json"],
     "--special"),
])
def test_option_text_that_is_not_utf8_is_refused(tmp_path, argv, flag):
    # "\udcff" is how Python receives the byte 0xff of argv: the child gets the raw byte
    r = bytepair_cli(*argv, cwd=tmp_path)
    _one_line_error(r, flag, "UTF-8")


def test_keep_token_with_a_broken_escape_names_the_flag(tmp_path):
    r = bytepair_cli("shrink", "-e", "gpt2", "--text", "hello", "--keep", "1000", "--keep-token", "\\x",
                     "-o", "s.json", cwd=tmp_path)
    _one_line_error(r, "--keep-token")


def test_min_frequency_warning_names_the_value_given():
    with pytest.warns(UserWarning) as rec:
        bytepair.train("ab ab ab", 300, min_frequency=2**70, pattern=None)
    assert str(2**70) in str(rec[0].message)


# ---------------------------------------------------------------- messages name the flag typed


def test_memory_in_petabytes_is_a_size(tmp_path):
    r = bytepair_cli("train", "--text", TEXT, "--vocab-size", "300", "--memory", "1PB", "-q", "-o", "t.json",
                     cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = bytepair_cli("train", "--text", TEXT, "--vocab-size", "300", "--memory", "2PB", "-q", "-o", "t.json",
                     cwd=tmp_path)
    err = _one_line_error(r, "--memory", "1PB")
    assert "memory_limit" not in err


def test_merge_memory_message_names_memory_flag(tmp_path):
    (tmp_path / "big.txt").write_text(TEXT * 4)
    r = bytepair_cli("train", "big.txt", "--vocab-size", "60000", "--memory", "16MB", "-q", "-o", "t.json",
                     cwd=tmp_path)
    if r.returncode == 0:
        pytest.fail("a 16 MB limit was expected to refuse 60,000 merges on this corpus")
    err = _one_line_error(r, "--memory")
    assert "memory_limit" not in err


def test_empty_text_field_names_the_flag_only(tmp_path):
    (tmp_path / "a.jsonl").write_text(json.dumps({"text": "hello"}) + "\n")
    r = bytepair_cli("train", "a.jsonl", "--text-field", "", "--vocab-size", "300", "-q", "-o", "t.json",
                     cwd=tmp_path)
    err = _one_line_error(r, "--text-field")
    assert "text_column" not in err and "text_field" not in err and "--text-column" not in err


def test_cache_that_is_a_file(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT)
    (tmp_path / "cache").write_text("")
    r = bytepair_cli("train", "a.txt", "--cache", "cache", "--vocab-size", "300", "-q", "-o", "t.json", cwd=tmp_path)
    err = _one_line_error(r, "--cache", "not a folder")
    assert "File exists" not in err


def test_a_damaged_cache_file_is_counted_again(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT)
    args = ("train", "a.txt", "--cache", "cache", "--vocab-size", "300", "-q", "--json")
    first = bytepair_cli(*args, "-o", "1.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [cached] = (tmp_path / "cache").iterdir()
    cached.write_bytes(cached.read_bytes()[:40])
    again = bytepair_cli(*args, "-o", "2.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "damaged" in again.stderr and str(cached.name) in again.stderr
    assert bytepair.load(tmp_path / "1.json").merges == bytepair.load(tmp_path / "2.json").merges
    assert bytepair.counts.ChunkCounts.load(cached)  # replaced by a good one


def test_a_gz_name_on_a_plain_file(tmp_path):
    (tmp_path / "a.jsonl.gz").write_text(json.dumps({"text": "hello"}) + "\n")
    r = bytepair_cli("train", "a.jsonl.gz", "--vocab-size", "300", "-q", "-o", "t.json", cwd=tmp_path)
    err = _one_line_error(r, "a.jsonl.gz", "gzip")
    assert "after line 0" not in err


def test_parquet_messages_never_mention_a_column_loader(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"body": ["x"]}), tmp_path / "a.parquet", compression="zstd")
    r = bytepair_cli("train", "a.parquet", "--vocab-size", "300", "-q", "-o", "t.json", cwd=tmp_path)
    err = _one_line_error(r, "a.parquet", "text")
    assert "loader" not in err


def test_shrink_without_numpy_says_so_before_loading_the_tokenizer(tmp_path):
    blocker = tmp_path / "block"
    (blocker / "numpy").mkdir(parents=True)
    (blocker / "numpy" / "__init__.py").write_text("raise ImportError('numpy is not installed')\n")
    pkg = Path(bytepair.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(pkg)]))
    r = subprocess.run([str(EXE), "shrink", "-t", "missing.json", "--text", "hello", "--keep", "300"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60, stdin=subprocess.DEVNULL)
    _one_line_error(r, "numpy")
    assert "missing.json" not in r.stderr


# ---------------------------------------------------------------- progress in a log


def test_train_writes_progress_lines_into_a_log(tmp_path):
    (tmp_path / "a.txt").write_text(TEXT)
    with open(tmp_path / "log", "w") as log:
        pkg = Path(bytepair.__file__).resolve().parent.parent
        env = dict(os.environ, PYTHONPATH=str(pkg))
        r = subprocess.run([str(EXE), "train", "a.txt", "--vocab-size", "400", "-o", "t.json"], stdout=subprocess.PIPE,
                           stderr=log, env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0
    lines = (tmp_path / "log").read_text().splitlines()
    assert any(line.startswith("counting ") for line in lines), lines
    assert any(re.match(r"merging (\d+)/\1 100% ", line) for line in lines), lines
    assert all("\r" not in line for line in lines)
    quiet = bytepair_cli("train", "a.txt", "--vocab-size", "400", "-q", "-o", "t.json", cwd=tmp_path)
    assert quiet.stderr == ""


# ---------------------------------------------------------------- SIGTERM during the final write


def test_sigterm_during_the_final_write_leaves_no_temporary_file(tmp_path):
    marker = tmp_path / "writing"
    # the real CLI in a child whose fsync (the last step of an atomic write) waits to be killed
    code = (
        "import os, sys, time\n"
        f"marker = {str(marker)!r}\n"
        "def slow_fsync(fd):\n"
        "    open(marker, 'w').close()\n"
        "    time.sleep(60)\n"
        "os.fsync = slow_fsync\n"
        "from bytepair.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    pkg = Path(bytepair.__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(pkg))
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.Popen([sys.executable, "-c", code, "train", "--text", TEXT, "--vocab-size", "300", "-q",
                          "-o", str(out / "t.json")], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert [f.name for f in out.iterdir() if f.name.endswith(".tmp")], "the write should be under way"
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode != 0
    assert list(out.iterdir()) == []


def test_gzip_jsonl_and_folder_inputs_for_count(tmp_path):
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(b'{"text": "hello world"}\n'))
    r = bytepair_cli("count", "-e", "gpt2", "a.jsonl.gz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with warnings.catch_warnings():
        assert int(r.stdout) == len(bytepair.get_encoding("gpt2").encode("hello world"))


def test_progress_amount_keeps_its_unit_and_precision_through_a_run():
    from bytepair.progress import format_status

    total = 1_234_567_890
    lines = [format_status("counting", done, total, "B", 1.0, None) for done in (0, 5_000, 987_000_000, 999_600_000,
                                                                             total)]
    amounts = [re.match(r"counting (.+?) \d+% ", line).group(1) for line in lines]
    shapes = {re.sub(r"\d", "9", a) for a in amounts}
    assert len(shapes) == 1, amounts
