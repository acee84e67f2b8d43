"""The ``bytepair`` command line.

Conventions shared by every command:

* the tokenizer: ``-e/--encoding NAME`` (a bundled encoding) or
  ``-t/--tokenizer FILE``, repeatable where several make sense (``count``,
  ``compare``); the default is ``o200k_base``;
* the input: positional files (``-`` is stdin), ``--text STRING``, or text piped
  on stdin;
* ``--json`` prints machine-readable output; tables are plain text when piped and
  drawn with colour in a terminal (``--color`` overrides);
* a user error prints one line ``bytepair: error: ...`` and exits with status 2;
  ``--debug`` shows the traceback instead.

Everything can be run in-process: ``main(["count", "--text", "hi"])`` returns the
exit status.

Layout: :mod:`.common` holds what the commands share (options, input, printing,
:func:`~.common.add_command`); each other module is a group of commands with an
``add_parsers(subparsers)`` function. To add a command, write a module like
:mod:`.encoding` and list it in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import warnings
from typing import NoReturn

from .. import __version__
from ..errors import BytepairError
from . import budgets, encoding, extend_parity, formats, inspect, scale_out, serve, shrink, training
from .common import UsageError

__all__ = ["COMMAND_MODULES", "UsageError", "build_parser", "cli_speak", "main"]

#: The command groups, in the order ``bytepair --help`` lists them.
COMMAND_MODULES = (training, extend_parity, encoding, budgets, inspect, shrink, formats, scale_out, serve)

_EPILOG = """\
examples:
  bytepair train                                   train on the bundled sample
  bytepair count -e gpt2 -e o200k_base README.md   count tokens
  bytepair truncate -e o200k_base --max-tokens 8000 FILE
  bytepair chunk -e cl100k_base --max-tokens 512 --overlap 64 FILE -o chunks.jsonl
  bytepair pieces -e gpt2 --text "토큰"             see every token's bytes
  bytepair trace --text "low lower lowest" --merges 4
  bytepair compare --text "Hello" --text "안녕하세요" --plot compare.png
  bytepair decode -e gpt2 --stream 169 228 254 169 223 108
  bytepair audit -e gpt2                           tokens no text can produce, duplicate spellings
  bytepair diff cl100k_base o200k_base --text FILE what two tokenizers disagree on
  bytepair shrink -e o200k_base corpus/ --keep 32000 -o small.json --id-map map.npy
  bytepair serve --open                            the web page: tokens as you type, training, comparisons

Run 'bytepair COMMAND --help' for a command's options.
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, like every other error of
    the command line (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        # "argument --limit: --limit must be ...": the flag once
        message = re.sub(r"^argument [^:]+: (?=--)", "", message)
        self.exit(2, f"bytepair: error: {cli_speak(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every ``bytepair`` command."""
    p = _Parser(
        prog="bytepair",
        description="Train, run and inspect byte-level BPE tokenizers (tiktoken-exact, offline).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"bytepair {__version__}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour tables and token boundaries (default: auto, only in a terminal)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.add_parsers(sub)
    return p


# The library's messages name Python arguments; on the command line they name flags.
_CLI_SPEAK = [
    (re.compile(r"\(for a tokenizer file use bytepair\.load\(path\)\)"), "(for a tokenizer file use -t FILE)"),
    (re.compile(r"bytepair\.get_encoding\('([^']+)'\)"), r"-e \1"),
    (re.compile(r"use get_encoding\(\) with one of"), "use -e with one of"),
    (re.compile(r"pass pattern= \(e\.g\. '(\w+)' or a regex\)"), r"pass --pattern (e.g. \1 or a regex)"),
    (re.compile(r" and special_tokens=, or preset="), ", or --preset"),
    (re.compile(r" and special_tokens= \(ids from (\d+)\)"),
     r" (for special tokens: bytepair convert the file with --special TOKEN=ID, ids from \1)"),
    (re.compile(r"\bspecial_tokens="), "--special"),
    (re.compile(r"\btext_column="), "--text-column"),
    (re.compile(r"\bpattern=(?=[\s,;.)]|$)"), "--pattern"),
    (re.compile(r"\bpreset=(?=[\s,;.)]|$)"), "--preset"),
    (re.compile(r"\bnum_threads\b"), "--threads"),
    (re.compile(r"\bpass append_eot=False\b"), "pass --no-eot"),
    (re.compile(r"\bmin_frequency=(\d+)"), r"--min-frequency \1"),
    (re.compile(r"\bmax_token_length=(\d+)"), r"--max-token-length \1"),
]


def cli_speak(msg: str) -> str:
    """A library message reworded for the command line (flags, not arguments).

    >>> cli_speak("no 'text' key; pass text_column=")
    "no 'text' key; pass --text-column"
    """
    for pat, repl in _CLI_SPEAK:
        msg = pat.sub(repl, msg)
    return msg


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        msg = f"{e.filename}: {e.strerror}"
    elif isinstance(e, KeyError) and type(e) is KeyError and e.args:
        msg = str(e.args[0])
    else:
        msg = str(e) or "an error without a message (run with --debug for the traceback)"
    # one line per line of the message (several failed shards: one per line), spaces tidied
    lines = [" ".join(line.split()) for line in msg.splitlines()]
    return cli_speak("\n  ".join(line for line in lines if line))


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings print as one ``bytepair: warning: ...`` line (no Python source path)."""
    print(f"bytepair: warning: {_message(Warning(str(message)))}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a bad argument (2, one line printed)
        return e.code if isinstance(e.code, int) else 2
    if getattr(args, "func", None) is None:  # bare `bytepair`: the help, not an error
        parser.print_help()
        return 0
    saved = warnings.showwarning
    warnings.showwarning = _show_warning
    saved_term = _catch_sigterm()
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until exit
        except OSError:  # pragma: no cover
            pass
        return 0
    except KeyboardInterrupt as e:
        if getattr(args, "debug", False):
            raise
        print(f"bytepair: {'terminated' if isinstance(e, Terminated) else 'interrupted'}", file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130
    except (BytepairError, ValueError, OSError, KeyError, ImportError) as e:
        if getattr(args, "debug", False):
            raise
        print(f"bytepair: error: {_message(e)}", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = saved
        if saved_term is not None:
            signal.signal(signal.SIGTERM, saved_term)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C would be: the command stops the same way
    (temporary files and partial outputs removed) and exits 143."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated


def _catch_sigterm():
    """Makes SIGTERM raise :class:`Terminated` (main thread only); returns the
    handler it replaced, or None when it could not install one."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
