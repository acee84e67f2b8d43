"""What every ``bytepair`` command shares: the tokenizer and input options, reading
input, printing (plain, JSON, or a rich table in a terminal), the busy indicator,
and :func:`add_command`, which every command module uses to add its subcommands."""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional

from .. import load
from ..errors import UsageError
from ..formats import detect
from ..outputs import check_outputs
from ..registry import get_encoding, list_encoding_names
from ..render import show_bytes, visible
from ..shards.paths import expand, file_key
from ..shards.readers import iter_documents as shard_documents
from ..shards.readers import shard_format

DEFAULT_ENCODING = "o200k_base"
BUNDLED = ("gpt2", "cl100k_base", "o200k_base")


def add_command(subparsers: Any, name: str, func: Callable[[argparse.Namespace], int], help: str,
                description: str, json_out: bool = True) -> argparse.ArgumentParser:
    """Adds subcommand ``name`` running ``func(args)``, with the options every command
    takes (``--debug``, ``--color``, and ``--json`` unless ``json_out`` is false)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    common.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS,
                        help="colour tables and token boundaries (default: auto, only in a terminal)")
    parents = [common]
    if json_out:
        jsonp = argparse.ArgumentParser(add_help=False)
        jsonp.add_argument("--json", action="store_true", help="print JSON for scripts")
        parents.append(jsonp)
    sp = subparsers.add_parser(name, help=help, description=description, parents=parents)
    sp.set_defaults(func=func)
    return sp



def sample_path() -> Path:
    return Path(str(resources.files("bytepair").joinpath("data").joinpath("sample.txt")))


def emit(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def emit_json(obj: Any) -> None:
    emit(json.dumps(obj, ensure_ascii=False, indent=2))


def use_color(args: argparse.Namespace) -> bool:
    mode = getattr(args, "color", "auto")
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(sys.stdout, "isatty", lambda: False)())


def show_result(result: Any, args: argparse.Namespace) -> None:
    """Prints an inspection result: JSON, a rich table in a terminal, or plain text."""
    if getattr(args, "json", False):
        emit_json(result.to_dict())
        return
    if use_color(args):
        try:
            from rich.console import Console
        except ImportError:
            pass
        else:
            Console(soft_wrap=False, force_terminal=True).print(result)
            return
    emit(result.to_text())


class Busy:
    """A one-line "working..." indicator with elapsed seconds on a terminal's stderr,
    for work that reports no progress of its own (loading, training, tracing).
    Silent when stderr is not a terminal or with --json."""

    def __init__(self, args: argparse.Namespace | None, label: str) -> None:
        self.label = label
        self.on = (args is not None and not getattr(args, "json", False) and not getattr(args, "quiet", False)
                   and bool(getattr(sys.stderr, "isatty", lambda: False)()))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        t0 = time.perf_counter()
        spin = "|/-\\"
        k = 0
        # wait a little first: quick work should not flash a message
        while not self._stop.wait(0.5 if k else 0.8):
            sys.stderr.write(f"\r{spin[k % 4]} {self.label} {time.perf_counter() - t0:4.0f} s")
            sys.stderr.flush()
            k += 1
        if k:
            sys.stderr.write("\r" + " " * (len(self.label) + 12) + "\r")
            sys.stderr.flush()

    def __enter__(self) -> None:
        if self.on:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()


# -- tokenizers


class TokenizerAction(argparse.Action):
    """Collects ``-e NAME`` and ``-t FILE`` into one ordered list of ("e"|"t", value)."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(("e" if option_string in ("-e", "--encoding") else "t", values))
        setattr(namespace, self.dest, items)


def add_tokenizer_options(p: argparse.ArgumentParser, *, many: bool = False, default: str = DEFAULT_ENCODING,
                          pattern: bool = True) -> None:
    """``-e NAME`` / ``-t FILE``, and ``--preset`` / ``--pattern`` for a ``-t`` file
    that does not store them (``.tiktoken``, GPT-2 ``vocab.json`` + ``merges.txt``).
    ``pattern=False`` when the command has a ``--pattern`` of its own (it is used
    for the file too)."""
    more = " (repeatable)" if many else ""
    p.add_argument("-e", "--encoding", dest="tokenizers", action=TokenizerAction, metavar="NAME",
                   help=f"a bundled encoding: {', '.join(list_encoding_names())}{more}; default {default}")
    p.add_argument("-t", "--tokenizer", dest="tokenizers", action=TokenizerAction, metavar="FILE",
                   help=f"a tokenizer file{more}")
    p.add_argument("--preset", metavar="NAME", choices=list_encoding_names(),
                   help="for a -t .tiktoken file: take pattern and special tokens from this bundled encoding")
    if pattern:
        p.add_argument("--pattern", metavar="PATTERN",
                       help="for a -t .tiktoken or GPT-2 file: its pre-tokenization (gpt2 | cl100k | o200k | none | a regex)")


def pattern_value(value: str | None) -> str | None:
    """A ``--pattern`` value as the API takes it: ``none`` (any case) is None."""
    if value is None or value.strip().lower() == "none":
        return None
    return value


#: The options for a -t file that does not store its pattern or special tokens: (flag, attribute, formats).
_FILE_OPTIONS = (("--preset", "preset", ("tiktoken",)), ("--pattern", "pattern", ("tiktoken", "gpt2")))


def _check_exists(value: str) -> None:
    if not os.path.exists(value):
        hint = f" ({value} is a bundled encoding: use -e {value})" if value in list_encoding_names() else ""
        raise FileNotFoundError(2, f"No such file or directory{hint}", value)


def check_file_options(args: argparse.Namespace, specs: Sequence[tuple[str, str]],
                       default: Sequence[str] = (DEFAULT_ENCODING,)) -> None:
    """Refuses ``--preset`` / ``--pattern`` when no tokenizer given can take them:
    they apply to ``-t`` files that do not store their own (``.tiktoken``; for
    ``--pattern`` also GPT-2 ``vocab.json`` + ``merges.txt``)."""
    for flag, attr, formats in _FILE_OPTIONS:
        if getattr(args, attr, None) is None:
            continue
        files = [v for k, v in specs if k == "t"]
        for f in files:
            _check_exists(f)
        found = [(f, detect(f)) for f in files]
        if any(fmt in formats for _, fmt in found):
            continue
        kinds = " or ".join(".tiktoken" if fmt == "tiktoken" else "GPT-2" for fmt in formats)
        if found:
            f, fmt = found[0]
            raise UsageError(f"{flag} applies to a -t {kinds} file; {f} is a {fmt} file, which stores its own "
                             f"pattern and special tokens: drop {flag}")
        names = ", ".join(f"-e {v}" for _, v in specs) or f"-e {', '.join(default)} (the default)"
        raise UsageError(f"{flag} applies to a -t {kinds} file; {names} has its own pattern and special tokens: "
                         f"drop {flag}")


def check_encoding_name(value: str) -> str:
    """An ``-e NAME`` value when bytepair bundles it, else a UsageError listing them."""
    if value not in list_encoding_names():
        raise UsageError(f"unknown encoding {value!r}; bundled encodings: {', '.join(list_encoding_names())} "
                         "(for a tokenizer file use -t FILE)")
    return value


def load_tokenizer(kind: str, value: str, args: argparse.Namespace | None = None) -> tuple[str, Any]:
    """One ``-e NAME`` or ``-t FILE``; ``--preset`` / ``--pattern`` in ``args`` go to
    a file that takes them (see :func:`check_file_options`, which refuses them
    when none does)."""
    if kind == "e":
        return value, get_encoding(check_encoding_name(value))
    _check_exists(value)
    kw: dict[str, Any] = {}
    wanted = [(attr, formats) for _, attr, formats in _FILE_OPTIONS if getattr(args, attr, None) is not None]
    if wanted:
        fmt = detect(value)
        for attr, formats in wanted:
            if fmt in formats:
                value_given = getattr(args, attr)
                kw[attr] = pattern_value(value_given) if attr == "pattern" else value_given
    return Path(value).name, load(value, **kw)


def load_tokenizers(args: argparse.Namespace, default: Sequence[str] = (DEFAULT_ENCODING,)) -> list[tuple[str, Any]]:
    given = getattr(args, "tokenizers", None) or []
    check_file_options(args, given, default)
    specs = given or [("e", d) for d in default]
    loaded = []
    for k, v in specs:
        with Busy(args, f"loading {v}"):
            loaded.append(load_tokenizer(k, v, args))
    # results are keyed by name: two files of one name (in two folders) are shown by their paths
    names = [name for name, _ in loaded]
    return [(v if k == "t" and names.count(name) > 1 else name, tok) for (k, v), (name, tok) in zip(specs, loaded)]


def one_tokenizer(args: argparse.Namespace) -> tuple[str, Any]:
    specs = getattr(args, "tokenizers", None) or []
    if len(specs) > 1:
        raise UsageError(f"'{args.command}' takes one tokenizer; got {len(specs)} (-e/-t given more than once)")
    return load_tokenizers(args)[0]


# -- input


def add_input_options(p: argparse.ArgumentParser, *, what: str = "text to read", texts: bool = False) -> None:
    """Positional files and ``--text`` (repeatable: every file and text given is used)."""
    p.add_argument("files", nargs="*", metavar="FILE", help=f"{what} (UTF-8 files; '-' is stdin)")
    p.add_argument("--text", action="append", metavar="STRING",
                   help="the text itself (repeatable; used with the files, after them)")


def add_special_option(p: argparse.ArgumentParser) -> None:
    """``--allow-special``: the one switch of every command that encodes or counts."""
    p.add_argument("--allow-special", action="store_true",
                   help="special-token text (e.g. <|endoftext|>) becomes its special id "
                        "(default: it is plain text, as in any user document)")


def allowed_special(args: argparse.Namespace) -> str | tuple:
    return "all" if getattr(args, "allow_special", False) else ()


def positive_int(what: str) -> Callable[[str], int]:
    """An argparse type: a whole number >= 1 (the message names the option)."""
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number, got {s!r}") from None
        if v < 1:
            raise argparse.ArgumentTypeError(f"{what} must be at least 1, got {v} (omit it for all cores)"
                                             if what == "--threads" else f"{what} must be at least 1, got {v}")
        return v

    return parse


def token_length(s: str) -> Optional[int]:
    """An argparse type for ``--max-token-length``: a whole number >= 1 (bytes),
    or ``none`` for no limit."""
    if s.strip().lower() == "none":
        return None
    return positive_int("--max-token-length")(s)


def nonnegative_int(what: str) -> Callable[[str], int]:
    """An argparse type: a whole number >= 0 (the message names the option)."""
    def parse(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a whole number, got {s!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"{what} must be at least 0, got {v}")
        return v

    return parse


def read_stdin_bytes() -> bytes:
    buf = getattr(sys.stdin, "buffer", None)
    if buf is not None:
        return buf.read()
    return sys.stdin.read().encode("utf-8")


_TEXT_ONLY_HINT = ("this command reads UTF-8 text only: convert the file first (e.g. iconv -f LATIN1 -t UTF-8), "
                   "or see its raw bytes' tokens with 'bytepair encode --bytes'")


def decode_input(raw: bytes, label: str, allow_bytes: bool, bytes_flag: bool = False) -> str | bytes:
    """``raw`` as text; binary input is refused with a hint the command can act on
    (``bytes_flag``: the command has ``--bytes``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if allow_bytes:
            return raw
        hint = "to encode binary data as raw bytes, pass --bytes" if bytes_flag else _TEXT_ONLY_HINT
        raise UsageError(f"{label} is not UTF-8 text (invalid byte at offset {e.start}); {hint}") from None
    if "\x00" in text and not allow_bytes:
        hint = "pass --bytes to encode it anyway" if bytes_flag else _TEXT_ONLY_HINT
        raise UsageError(f"{label} looks binary (it contains NUL bytes); {hint}")
    return text


def _file_inputs(given: str, seen: set, allow_bytes: bool, flag: bool) -> list[tuple[str, str | bytes]]:
    """The documents of one path argument, read as training reads it (folders,
    globs, JSONL and Parquet shards, gzip; each file once, see
    :mod:`bytepair.shards.paths`), labelled by file name."""
    out: list[tuple[str, str | bytes]] = []
    for path in expand(given):
        if file_key(path) in seen:
            continue
        seen.add(file_key(path))
        label = Path(path).name
        if shard_format(path) == "text" and not path.lower().endswith(".gz"):
            with open(path, "rb") as fh:
                raw = fh.read()
            out.append((label, decode_input(raw, path, allow_bytes, flag)))
        else:
            out += [(label, doc) for doc in shard_documents(path)]
    return out


def read_path_texts(paths: Sequence[str]) -> list[str]:
    """The documents of option values that name files (``--eval FILE``,
    ``diff --text FILE``), read as training reads paths (see :func:`read_inputs`)."""
    seen: set = set()
    return [str(t) for p in paths for _, t in _file_inputs(p, seen, False, False)]


def check_cli_outputs(args: argparse.Namespace, outputs: Sequence[tuple[str, Any]],
                      inputs: Sequence[tuple[str, Any]] = ()) -> None:
    """Refuses, before any work, an output that is one of the command's
    inputs (its files, ``-t`` tokenizer files, and ``inputs``) or another of
    its outputs (see :mod:`bytepair.outputs`). ``outputs``: ``(flag, path)``."""
    given = [("the input", f) for f in getattr(args, "files", None) or [] if f != "-"]
    given += [("the tokenizer -t", v) for k, v in getattr(args, "tokenizers", None) or [] if k == "t"]
    check_outputs(outputs, [*given, *inputs])


def read_inputs(args: argparse.Namespace, *, allow_bytes: bool = False, required: bool = True) -> list[tuple[str, str | bytes]]:
    """The inputs as ``(label, text)`` pairs: files, then ``--text`` values; stdin
    when neither is given (an error when stdin is a terminal)."""
    out: list[tuple[str, str | bytes]] = []
    flag = hasattr(args, "bytes")
    seen: set = set()
    for f in getattr(args, "files", None) or []:
        if f == "-":
            out.append(("<stdin>", decode_input(read_stdin_bytes(), "<stdin>", allow_bytes, flag)))
            continue
        out += _file_inputs(f, seen, allow_bytes, flag)
    texts = getattr(args, "text", None)
    if isinstance(texts, str):
        texts = [texts]
    for t in texts or []:
        out.append((t, t))
    if not out:
        if not required:
            return out
        if getattr(sys.stdin, "isatty", lambda: False)():
            raise UsageError("no input: give FILE..., --text STRING, or pipe text on stdin")
        out.append(("<stdin>", decode_input(read_stdin_bytes(), "<stdin>", allow_bytes, flag)))
    return out


def unique_labels(labels: Sequence[str]) -> list[str]:
    """Input labels made distinct for JSON keys: a repeat gets ``#2``, ``#3``...

    >>> unique_labels(["a", "b", "a"])
    ['a', 'b', 'a#2']
    """
    seen: dict[str, int] = {}
    out = []
    for lb in labels:
        seen[lb] = seen.get(lb, 0) + 1
        out.append(lb if seen[lb] == 1 else f"{lb}#{seen[lb]}")
    return out


def read_texts(args: argparse.Namespace, **kw: Any) -> list[tuple[str, str]]:
    return [(label, t) for label, t in read_inputs(args, **kw) if isinstance(t, str)]


def read_joined_text(args: argparse.Namespace) -> str:
    return "".join(t for _, t in read_texts(args))


def unescape(value: str, flag: str) -> str:
    r"""An option value with its backslash escapes (``\n``, ``\t``, ``\x41`` ...)
    read; a broken escape is a UsageError naming ``flag``.

    >>> unescape(r"a\tb", "--documents") == "a\tb"
    True
    """
    try:
        return value.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as e:
        raise UsageError(f"{flag} '{value}': a broken backslash escape ({e.reason})") from None


def int_list(s: str, what: str) -> list[int]:
    """Whole numbers separated by spaces and/or commas; an error names the first bad one.

    >>> int_list("1, 2 3", "ids")
    [1, 2, 3]
    """
    out = []
    for x in s.replace(",", " ").split():
        try:
            out.append(int(x))
        except ValueError:
            raise UsageError(f"{what} must be whole numbers (separated by spaces or commas); {x!r} is not one") from None
    return out


# -- ANSI colouring of token boundaries

_BG = ("48;5;223", "48;5;153", "48;5;194", "48;5;218", "48;5;189")


def boundaries(p: Any, color: bool) -> str:
    """The text with token boundaries: alternating background colours in a terminal,
    ``|`` between tokens otherwise. Partial UTF-8 tokens show as ``\\xNN``."""
    if not color:
        return p.boundaries()
    parts = []
    for piece in p.pieces:
        s = visible(show_bytes(piece.bytes))
        style = _BG[piece.index % len(_BG)] + ";30"
        if not piece.complete:
            style += ";4;31"  # underlined red: a piece of a character
        if piece.special:
            style = "48;5;238;97"
        parts.append(f"\x1b[{style}m{s}\x1b[0m")
    return "".join(parts)


