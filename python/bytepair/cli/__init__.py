"""The ``bytepair`` command line.

Conventions shared by every command:

* the tokenizer: ``-e/--encoding NAME`` (a bundled encoding) or
  ``-t/--tokenizer FILE``, repeatable where several make sense (``count``,
  ``compare``); the default is ``o200k_base``;
* the input: positional files (``-`` is stdin), ``--text STRING``, or text piped
  on stdin;
* ``--json`` prints machine-readable output; tables are plain text when piped and
  drawn with colour in a terminal (``--color`` overrides);
* a user error (a :class:`~bytepair.errors.BytepairError` or an ``OSError``)
  prints one line ``bytepair: error: ...`` and exits with status 2, naming the
  options by their flags (an error's ``argument`` and the ``name=`` spellings
  in its message, through :data:`ARGUMENT_DESTS` and the command's parser);
  any other exception is a bug: its traceback is printed, exit status 1;
  ``--debug`` shows the traceback of either.

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
import traceback
import warnings
from typing import NoReturn

from .. import __version__
from ..errors import BytepairError
from . import budgets, encoding, extend_parity, formats, inspect, scale_out, serve, shrink, training
from .common import UsageError

__all__ = ["ARGUMENT_DESTS", "COMMAND_MODULES", "UsageError", "build_parser", "cli_speak", "command_flags", "main"]

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
        self.exit(2, f"bytepair: error: {message} (see '{self.prog} --help')\n")


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
    p.set_defaults(commands=sub.choices)
    return p


#: A library argument -> the ``dest`` of the command-line option that sets it,
#: where the two names differ (an argument named like its option's dest, such as
#: ``pattern`` or ``text_column``, needs no row). The flag itself comes from the
#: running command's parser, so an error names the option that command has.
ARGUMENT_DESTS = {
    "memory_limit": "memory",
    "num_threads": "threads",
    "special_tokens": "special",
    "cache_dir": "cache",
    "append_eot": "no_eot",
    "global_merges": "parity_global",
    "parity_global_merges": "parity_global",
    "keep_tokens": "keep_token",
    "input_format": "input_format",
    "num_merges": "merges",
}

#: How an argument is named on a command that has no option for it.
_ELSEWHERE = {
    "special_tokens": "the special tokens (for a file: bytepair convert it with --special TOKEN=ID)",
}


def command_flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str, bool]]:
    """Library argument -> ``(flag, takes_a_value)`` for the options of one
    command's ``parser`` (see :data:`ARGUMENT_DESTS`)."""
    by_dest: dict[str, tuple[str, bool]] = {}
    for action in parser._actions:  # argparse lists a parser's options only here
        longs = [o for o in action.option_strings if o.startswith("--")] or action.option_strings
        if longs and action.dest not in by_dest:
            by_dest[action.dest] = (longs[0], action.nargs != 0)
    flags = {dest: flag for dest, flag in by_dest.items()}
    for argument, dest in ARGUMENT_DESTS.items():
        if dest in by_dest:
            flags[argument] = by_dest[dest]
    return flags


def cli_speak(msg: str, flags: dict[str, tuple[str, bool]], argument: str | None = None) -> str:
    """A library message with its arguments named as the command line names
    them: every ``name=`` (with its value, if any) of an argument in ``flags``,
    and the bare name of ``argument``, the one the error is about.

    >>> cli_speak("no 'text' key; pass text_column=", {"text_column": ("--text-column", True)})
    "no 'text' key; pass --text-column"
    >>> cli_speak("memory_limit 'x' is not a size", {"memory_limit": ("--memory", True)}, "memory_limit")
    "--memory 'x' is not a size"
    """
    names = dict(_ELSEWHERE)
    names.update({arg: flag for arg, (flag, _) in flags.items()})
    for arg, spelled in names.items():
        if f"{arg}=" in msg:
            msg = _spell(msg, arg, spelled, flags.get(arg, ("", True))[1])
    if argument is not None and argument in names:
        msg = re.sub(rf"\b{re.escape(argument)}\b(?!=)", names[argument], msg)
    return msg


def _spell(msg: str, arg: str, flag: str, takes_value: bool) -> str:
    """``msg`` with each ``arg=`` / ``arg=VALUE`` written ``flag`` / ``flag VALUE``
    (``flag`` alone for an option without a value, such as ``append_eot=False``: ``--no-eot``)."""
    out, pos = [], 0
    for m in re.finditer(rf"\b{re.escape(arg)}=('[^']*'|[^\s,;)]+)?", msg):
        out.append(msg[pos:m.start()])
        out.append(f"{flag} {m.group(1)}" if m.group(1) and takes_value else flag)
        pos = m.end()
    return "".join(out) + msg[pos:]


def _message(e: BaseException, flags: dict[str, tuple[str, bool]]) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        msg = f"{e.filename}: {e.strerror}"
    else:
        msg = str(e) or "an error without a message (run with --debug for the traceback)"
    # one line per line of the message (several failed shards: one per line), spaces tidied
    lines = [" ".join(line.split()) for line in msg.splitlines()]
    return cli_speak("\n  ".join(line for line in lines if line), flags, getattr(e, "argument", None))


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


class _Terminated(SystemExit):
    """SIGTERM received: the command unwinds as from an exception, then exits
    with status 128 + the signal number, saying so in one line."""


def _terminate(signum: int, frame: object) -> NoReturn:
    """SIGTERM ends the command as an exception does: files being written
    (atomic writes' temporary files) are removed on the way out."""
    raise _Terminated(128 + signum)


def _warning_printer(flags: dict[str, tuple[str, bool]]):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        """Warnings print as one ``bytepair: warning: ...`` line (no Python source path)."""
        print(f"bytepair: warning: {_message(Warning(str(message)), flags)}", file=sys.stderr)

    return show


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status (0 ok, 2 user error, 1 a bug)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) or a bad argument (2, one line printed)
        return e.code if isinstance(e.code, int) else 2
    if getattr(args, "func", None) is None:  # bare `bytepair`: the help, not an error
        parser.print_help()
        return 0
    flags = command_flags(args.commands[args.command])
    saved = warnings.showwarning
    warnings.showwarning = _warning_printer(flags)
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
    except _Terminated as e:
        if getattr(args, "debug", False):
            raise
        print("bytepair: terminated", file=sys.stderr)
        return int(e.code) if isinstance(e.code, int) else 143
    except (BytepairError, OSError) as e:  # the user's to fix: one line
        if getattr(args, "debug", False):
            raise
        print(f"bytepair: error: {_message(e, flags)}", file=sys.stderr)
        return 2
    except Exception:  # anything else is a bug in bytepair: the traceback, to report it
        if getattr(args, "debug", False):
            raise
        traceback.print_exc()
        print("bytepair: internal error (a bug in bytepair; please report it with the traceback above)",
              file=sys.stderr)
        return 1
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
