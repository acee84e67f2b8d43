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
import threading
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
    (re.compile(r"\btext_column\b"), "--text-column"),
    (re.compile(r"\btext_field\b"), "--text-field"),
    (re.compile(r"\bmemory_limit\b"), "--memory"),
    (re.compile(r"\bcache_dir\b"), "--cache"),
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


#: Options whose value is text the command uses as text (not a path): bytes a
#: terminal passed that are not UTF-8 are refused, naming the option, as stdin
#: refuses them, instead of becoming U+FFFD.
_TEXT_OPTIONS = {"text": "--text", "special": "--special", "keep_token": "--keep-token", "pattern": "--pattern",
                 "name": "--name", "text_column": "--text-column", "text_field": "--text-field",
                 "documents": "--documents", "bos": "--bos", "eos": "--eos", "pad": "--pad"}


def _check_text_options(args: argparse.Namespace) -> None:
    for dest, flag in _TEXT_OPTIONS.items():
        if dest == "text" and getattr(args, "command", None) == "diff":  # diff's --text names files
            continue
        values = getattr(args, dest, None)
        for v in values if isinstance(values, list) else [values]:
            if isinstance(v, str) and any("\udc80" <= c <= "\udcff" for c in v):
                raw = os.fsencode(v)
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise UsageError(f"{flag} {raw!r} is not UTF-8 text (invalid byte at offset {e.start}); "
                                     "give UTF-8 text") from None


def _terminate(signum: int, frame: object) -> NoReturn:
    """SIGTERM ends the command as an exception does: files being written
    (atomic writes' temporary files) are removed on the way out."""
    raise SystemExit(128 + signum)


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
    on_term = _on_sigterm(_terminate)
    try:
        _check_text_options(args)
        return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until exit
        except OSError:  # pragma: no cover
            pass
        return 0
    except KeyboardInterrupt:
        if getattr(args, "debug", False):
            raise
        print("bytepair: interrupted", file=sys.stderr)
        return 130
    except (BytepairError, ValueError, OSError, KeyError, ImportError) as e:
        if getattr(args, "debug", False):
            raise
        print(f"bytepair: error: {_message(e)}", file=sys.stderr)
        return 2
    finally:
        warnings.showwarning = saved
        _on_sigterm(on_term)


def _on_sigterm(handler: object) -> object:
    """Installs ``handler`` for SIGTERM (main thread only) and returns the
    previous one; None: nothing to install or restore."""
    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
