"""The command line maps library errors by their fields: a ``BytepairError`` or
``OSError`` is the user's (one line, exit 2, flags named as the command spells
them, from the error's ``argument``); anything else is a bug (traceback, exit 1)."""

from __future__ import annotations

import pytest

from bytepair import cli
from bytepair.cli import training as cli_training
from bytepair.errors import ShrinkError, TrainingError
from conftest import DATA
from conftest import run_cli as run


@pytest.mark.parametrize("error", [ValueError("a bug: bad arithmetic"), KeyError("missing_key"),
                                   ImportError("a bug: no such module")])
def test_a_plain_python_error_inside_a_command_is_a_bug_not_a_user_error(capsys, tmp_path, monkeypatch, error):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli_training, "train_report", broken)
    code, _, err = run(capsys, "train", "--text", "ab ab", "-q", "-o", str(tmp_path / "t.json"))
    assert code == 1
    assert "Traceback (most recent call last)" in err and type(error).__name__ in err
    assert "internal error" in err and "bytepair: error:" not in err
    with pytest.raises(type(error)):  # --debug: the exception itself
        cli.main(["train", "--debug", "--text", "ab ab", "-q", "-o", str(tmp_path / "t.json")])


def test_a_library_error_about_memory_limit_names_the_memory_flag(capsys, tmp_path):
    for command in (["train", str(DATA / "en_kjv.txt"), "-q", "-o", str(tmp_path / "t.json")],
                    ["count-chunks", str(DATA / "en_kjv.txt"), "-o", str(tmp_path / "c.bpc"), "--workers", "1"]):
        code, _, err = run(capsys, *command, "--memory", "1KB")
        assert code == 2, err
        line = err.strip()
        assert line.startswith("bytepair: error: --memory '1KB' is out of range") and "\n" not in line
        assert "memory_limit" not in line


def test_the_argument_field_picks_the_flag_of_the_running_command(capsys, tmp_path, monkeypatch):
    # the same library error, raised inside two commands that spell the option differently
    def refuse(*args, **kwargs):
        raise TrainingError("num_threads is too many for this corpus; lower num_threads=8", argument="num_threads")

    monkeypatch.setattr(cli_training, "train_report", refuse)
    code, _, err = run(capsys, "train", "--text", "ab ab", "-q", "-o", str(tmp_path / "t.json"))
    assert code == 2 and err.strip() == "bytepair: error: --threads is too many for this corpus; lower --threads 8"


def test_an_argument_the_command_has_no_flag_for_stays_as_the_library_names_it():
    flags = cli.command_flags(cli.build_parser().parse_args(["decode", "1"]).commands["decode"])
    assert "memory_limit" not in flags
    msg = "memory_limit 'x' is not a size"
    assert cli.cli_speak(msg, flags, "memory_limit") == msg
    assert ShrinkError("x", argument="keep").argument == "keep" and ShrinkError("x").argument is None


def test_every_row_of_the_argument_table_names_an_option_some_command_has():
    commands = cli.build_parser().parse_args(["decode", "1"]).commands
    dests = {a.dest for p in commands.values() for a in p._actions if a.option_strings}
    missing = {arg: dest for arg, dest in cli.ARGUMENT_DESTS.items() if dest not in dests}
    assert not missing
