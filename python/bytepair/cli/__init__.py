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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Callable, ClassVar

from ..errors import BytepairError

DEFAULT_ENCODING = "o200k_base"
BUNDLED = ("gpt2", "cl100k_base", "o200k_base")


class UsageError(BytepairError, ValueError):
    """A command-line mistake (no input, a bad option value, a binary file, ...)."""


# ---------------------------------------------------------------- shared helpers


def _sample_path() -> Path:
    return Path(str(resources.files("bytepair").joinpath("data").joinpath("sample.txt")))


def _emit(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def _emit_json(obj: Any) -> None:
    _emit(json.dumps(obj, ensure_ascii=False, indent=2))


def _use_color(args: argparse.Namespace) -> bool:
    mode = getattr(args, "color", "auto")
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(sys.stdout, "isatty", lambda: False)())


def _show_result(result: Any, args: argparse.Namespace) -> None:
    """Prints an inspection result: JSON, a rich table in a terminal, or plain text."""
    if getattr(args, "json", False):
        _emit_json(result.to_dict())
        return
    if _use_color(args):
        try:
            from rich.console import Console
        except ImportError:
            pass
        else:
            Console(soft_wrap=False, force_terminal=True).print(result)
            return
    _emit(result.to_text())


class _Busy:
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


class _TokenizerAction(argparse.Action):
    """Collects ``-e NAME`` and ``-t FILE`` into one ordered list of ("e"|"t", value)."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest, None) or [])
        items.append(("e" if option_string in ("-e", "--encoding") else "t", values))
        setattr(namespace, self.dest, items)


def _add_tokenizer_options(p: argparse.ArgumentParser, *, many: bool = False, default: str = DEFAULT_ENCODING) -> None:
    more = " (repeatable)" if many else ""
    p.add_argument("-e", "--encoding", dest="tokenizers", action=_TokenizerAction, metavar="NAME",
                   help=f"a bundled encoding: {', '.join(BUNDLED)}{more}; default {default}")
    p.add_argument("-t", "--tokenizer", dest="tokenizers", action=_TokenizerAction, metavar="FILE",
                   help=f"a tokenizer file{more}")


def _load_tokenizer(kind: str, value: str) -> tuple[str, Any]:
    if kind == "e":
        from ..registry import get_encoding

        return value, get_encoding(value)
    from .. import load

    if not os.path.exists(value):
        raise FileNotFoundError(2, "No such file or directory", value)
    return Path(value).name, load(value)


def _tokenizers(args: argparse.Namespace, default: Sequence[str] = (DEFAULT_ENCODING,)) -> list[tuple[str, Any]]:
    specs = getattr(args, "tokenizers", None) or [("e", d) for d in default]
    out = []
    for k, v in specs:
        with _Busy(args, f"loading {v}"):
            out.append(_load_tokenizer(k, v))
    return out


def _one_tokenizer(args: argparse.Namespace) -> tuple[str, Any]:
    specs = getattr(args, "tokenizers", None) or []
    if len(specs) > 1:
        raise UsageError(f"'{args.command}' takes one tokenizer; got {len(specs)} (-e/-t given more than once)")
    return _tokenizers(args)[0]


# -- input


def _add_input_options(p: argparse.ArgumentParser, *, what: str = "text to read", texts: bool = False) -> None:
    p.add_argument("files", nargs="*", metavar="FILE", help=f"{what} (UTF-8 files; '-' is stdin)")
    p.add_argument("--text", action="append" if texts else "store", metavar="STRING",
                   help="the text itself instead of files" + (" (repeatable)" if texts else ""))


def _read_stdin_bytes() -> bytes:
    buf = getattr(sys.stdin, "buffer", None)
    if buf is not None:
        return buf.read()
    return sys.stdin.read().encode("utf-8")


def _decode_input(raw: bytes, label: str, allow_bytes: bool) -> str | bytes:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        if allow_bytes:
            return raw
        raise UsageError(
            f"{label} is not UTF-8 text (invalid byte at offset {e.start});"
            " to encode binary data as raw bytes, pass --bytes"
        ) from None
    if "\x00" in text and not allow_bytes:
        raise UsageError(f"{label} looks binary (it contains NUL bytes); pass --bytes to encode it anyway")
    return text


def _inputs(args: argparse.Namespace, *, allow_bytes: bool = False, required: bool = True) -> list[tuple[str, str | bytes]]:
    """The inputs as ``(label, text)`` pairs: files, then ``--text`` values; stdin
    when neither is given (an error when stdin is a terminal)."""
    out: list[tuple[str, str | bytes]] = []
    for f in getattr(args, "files", None) or []:
        if f == "-":
            out.append(("<stdin>", _decode_input(_read_stdin_bytes(), "<stdin>", allow_bytes)))
            continue
        with open(f, "rb") as fh:
            raw = fh.read()
        out.append((Path(f).name, _decode_input(raw, f, allow_bytes)))
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
        out.append(("<stdin>", _decode_input(_read_stdin_bytes(), "<stdin>", allow_bytes)))
    return out


def _texts(args: argparse.Namespace, **kw: Any) -> list[tuple[str, str]]:
    return [(label, t) for label, t in _inputs(args, **kw) if isinstance(t, str)]


def _joined_text(args: argparse.Namespace) -> str:
    return "".join(t for _, t in _texts(args))


def _int_list(s: str, what: str) -> list[int]:
    try:
        return [int(x) for x in s.replace(",", " ").split()]
    except ValueError:
        raise UsageError(f"{what} must be whole numbers separated by commas, got {s!r}") from None


# -- ANSI colouring of token boundaries

_BG = ("48;5;223", "48;5;153", "48;5;194", "48;5;218", "48;5;189")


def _boundaries(p: Any, color: bool) -> str:
    """The text with token boundaries: alternating background colours in a terminal,
    ``|`` between tokens otherwise. Partial UTF-8 tokens show as ``\\xNN``."""
    from ..inspect import show_bytes, visible

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


# ---------------------------------------------------------------- train


def _train_kwargs(train_fn: Callable[..., Any], args: argparse.Namespace) -> dict:
    """Options only some versions of ``bytepair.train`` accept (progress, threads)."""
    import inspect as _pyinspect

    params = _pyinspect.signature(train_fn).parameters
    kw: dict = {}
    if "progress" in params and (args.quiet or args.json):
        kw["progress"] = False
    if "num_threads" in params and getattr(args, "threads", None):
        kw["num_threads"] = args.threads
    return kw


def _reports_progress(train_fn: Callable[..., Any]) -> bool:
    """True when ``train`` draws its own progress bar (it takes ``progress=``)."""
    import inspect as _pyinspect

    return "progress" in _pyinspect.signature(train_fn).parameters


def cmd_train(args: argparse.Namespace) -> int:
    from .. import train

    specials = args.special or ["<|endoftext|>"]
    pattern = None if args.pattern == "none" else args.pattern
    extra = {"min_frequency": args.min_frequency, "max_token_length": args.max_token_length}
    kw = _train_kwargs(train, args)
    t0 = time.perf_counter()
    if args.counts:
        if args.files or args.text:
            raise UsageError("give either --counts FILE or training text, not both")
        from ..counts import ChunkCounts

        counts = ChunkCounts.load(args.counts)
        with _Busy(None if _reports_progress(train) else args, "training"):
            tok = train(None, args.vocab_size, counts=counts, special_tokens=specials, **extra, **kw)
        source = args.counts
        n_bytes = sum(len(c) * n for c, n in counts.items())
        n_tokens = sum(n * len(tok.encode_ordinary(c.decode("utf-8", "replace"))) for c, n in counts.items())
    else:
        if args.text:
            data: Any = [args.text]
            source = "--text"
        else:
            paths = [Path(p) for p in args.files] or [_sample_path()]
            for p in paths:
                if not p.exists():
                    raise FileNotFoundError(2, "No such file or directory", str(p))
            data = paths
            source = ", ".join(str(p) for p in paths) if args.files else "the bundled sample"
        with _Busy(None if _reports_progress(train) else args, "training"):
            tok = train(data, args.vocab_size, pattern=pattern, special_tokens=specials, **extra, **kw)
        from ..train import iter_documents

        docs = list(iter_documents(data))
        n_bytes = sum(len(d.encode("utf-8")) for d in docs)
        n_tokens = sum(len(tok.encode_ordinary(d)) for d in docs)
    secs = time.perf_counter() - t0
    out = Path(args.output)
    tok.save(out)
    first = [tok.decode_single_token_bytes(256 + k).decode("utf-8", "replace") for k in range(min(10, len(tok.merges)))]
    if args.json:
        _emit_json({"source": source, "bytes": n_bytes, "seconds": secs, "n_vocab": tok.n_vocab,
                    "merges": len(tok.merges), "special_tokens": specials,
                    "bytes_per_token": n_bytes / max(n_tokens, 1), "first_merges": first, "output": str(out)})
        return 0
    _emit(f"trained on {source} ({n_bytes:,} bytes) in {secs:.2f} s")
    _emit(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {len(specials)} special")
    _emit(f"bytes per token on the training text: {n_bytes / max(n_tokens, 1):.2f}")
    _emit(f"first merges: {', '.join(repr(s) for s in first)}")
    _emit(f"wrote {out}")
    return 0


# ---------------------------------------------------------------- encode / decode / count


def _byte_ids(tok: Any) -> list[int]:
    ranks = tok.mergeable_ranks
    return [ranks[bytes([b])] for b in range(256)]


def _encode_raw(tok: Any, data: bytes, allow_special: bool) -> list[int]:
    """Encodes arbitrary bytes: valid UTF-8 runs as text, each invalid byte as its
    single-byte token, so ``decode_bytes`` gives ``data`` back exactly."""
    import re

    s = data.decode("utf-8", "surrogateescape")
    byte_ids: list[int] | None = None
    ids: list[int] = []
    pos = 0
    for m in re.finditer("[\udc80-\udcff]+", s):
        ids += _encode_text(tok, s[pos:m.start()], allow_special)
        if byte_ids is None:
            byte_ids = _byte_ids(tok)
        ids += [byte_ids[ord(c) - 0xDC00] for c in m.group()]
        pos = m.end()
    ids += _encode_text(tok, s[pos:], allow_special)
    return ids


def _encode_text(tok: Any, text: str, allow_special: bool, args: argparse.Namespace | None = None) -> list[int]:
    if not text:
        return []
    blocks = _blocks_with_progress(tok, text, args)
    if blocks is not None:
        ids: list[int] = []
        for block in blocks:
            ids += _encode_text(tok, block, allow_special)
        return ids
    if allow_special:
        return tok.encode(text, allowed_special="all")
    return tok.encode_ordinary(text)


#: Inputs longer than this many characters get a progress bar in a terminal.
BLOCK_CHARS = 1 << 20
_SPLITTABLE = ("gpt2", "cl100k", "o200k")


def split_blocks(text: str, size: int) -> list[str]:
    """Cuts ``text`` into blocks of about ``size`` characters, only where the bundled
    pre-tokenization patterns (gpt2, cl100k, o200k) always end a chunk: right after
    a newline that follows a non-space character and precedes a letter or digit.
    Encoding the blocks one after the other then gives exactly the ids of the whole
    text (tests check this against tiktoken on real corpora).

    >>> split_blocks("ab\\ncd\\n ef\\ngh", 2)
    ['ab\\n', 'cd\\n ef\\n', 'gh']
    """
    out: list[str] = []
    start, n = 0, len(text)
    pos = size
    while pos < n:
        i = text.find("\n", pos)
        while i != -1 and not (0 < i < n - 1 and not text[i - 1].isspace() and text[i + 1].isalnum()):
            i = text.find("\n", i + 1)
        if i == -1:
            break
        out.append(text[start : i + 1])
        start = i + 1
        pos = start + size
    out.append(text[start:])
    return out


def _blocks_with_progress(tok: Any, text: str, args: argparse.Namespace | None) -> Iterable[str] | None:
    """Blocks of a long text wrapped in a progress bar, when one would be shown;
    None otherwise (the text is then encoded whole)."""
    if args is None or len(text) <= BLOCK_CHARS or getattr(tok, "pattern_name", None) not in _SPLITTABLE:
        return None
    if getattr(args, "json", False) or not getattr(sys.stderr, "isatty", lambda: False)():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    blocks = split_blocks(text, BLOCK_CHARS)

    def gen() -> Iterable[str]:
        with tqdm(total=len(text), unit="char", unit_scale=True, leave=False, desc="encoding") as bar:
            for b in blocks:
                yield b
                bar.update(len(b))

    return gen()


def cmd_encode(args: argparse.Namespace) -> int:
    _, tok = _one_tokenizer(args)
    results = []
    for label, data in _inputs(args, allow_bytes=args.bytes):
        if isinstance(data, bytes):
            ids = _encode_raw(tok, data, args.allow_special)
        else:
            ids = _encode_text(tok, data, args.allow_special, args)
        results.append((label, ids))
    if args.json:
        _emit_json(results[0][1] if len(results) == 1 else {label: ids for label, ids in results})
        return 0
    for _, ids in results:
        _emit(" ".join(map(str, ids)))
    return 0


def _read_ids(args: argparse.Namespace) -> list[int]:
    raw: str
    if args.ids:
        raw = " ".join(args.ids)
    else:
        if getattr(sys.stdin, "isatty", lambda: False)():
            raise UsageError("no ids: give them as arguments or pipe them on stdin")
        raw = _read_stdin_bytes().decode("utf-8", "replace")
    raw = raw.strip()
    if raw.startswith("["):
        try:
            ids = json.loads(raw)
        except json.JSONDecodeError as e:
            raise UsageError(f"ids look like JSON but do not parse: {e}") from None
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise UsageError("the JSON ids must be a list of whole numbers")
        return ids
    return _int_list(raw, "token ids")


def cmd_decode(args: argparse.Namespace) -> int:
    _, tok = _one_tokenizer(args)
    ids = _read_ids(args)
    if args.stream:
        return _decode_stream(tok, ids, args)
    data = tok.decode_bytes(ids)
    if args.bytes:
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        else:
            sys.stdout.flush()
            out.write(data)
            out.flush()
        return 0
    text = data.decode("utf-8", errors="replace")
    if args.json:
        _emit_json({"text": text, "complete_utf8": data == text.encode("utf-8")})
    else:
        _emit(text)
    return 0


def _stream_steps(tok: Any, ids: Sequence[int]) -> tuple[list[str], str]:
    """What an incremental decoder emits after each id, and what ``flush`` adds at
    the end. Uses ``tok.stream_decoder()`` when the tokenizer has one."""
    make = getattr(tok, "stream_decoder", None)
    if callable(make):
        dec = make()
        steps = [dec.feed(i) for i in ids]
        flush = getattr(dec, "flush", None)
        return steps, flush() if callable(flush) else ""
    import codecs

    inc = codecs.getincrementaldecoder("utf-8")(errors="replace")
    steps = [inc.decode(tok.decode_single_token_bytes(i)) for i in ids]
    return steps, inc.decode(b"", final=True)


def _decode_stream(tok: Any, ids: Sequence[int], args: argparse.Namespace) -> int:
    from ..inspect import Plain, format_table

    steps, tail = _stream_steps(tok, ids)
    alone = [tok.decode_single_token_bytes(i) for i in ids]
    if args.json:
        _emit_json({"steps": [{"id": i, "hex": b.hex(), "alone": b.decode("utf-8", "replace"), "emitted": s}
                              for i, b, s in zip(ids, alone, steps)], "flush": tail, "text": "".join(steps) + tail})
        return 0
    rows = [[Plain(i), b.hex(" "), repr(b.decode("utf-8", "replace")), repr(s)] for i, b, s in zip(ids, alone, steps)]
    _emit(format_table(["id", "bytes", "decoded alone", "stream emits"], rows, align="rlll"))
    if tail:
        _emit(f"flush emits {tail!r}")
    _emit(f"text: {''.join(steps) + tail}")
    return 0


def cmd_count(args: argparse.Namespace) -> int:
    from ..inspect import _count

    text = _joined_text(args)
    toks = _tokenizers(args)
    counts = []
    for name, tok in toks:
        blocks = _blocks_with_progress(tok, text, args)
        counts.append((name, _count(tok, text) if blocks is None else sum(_count(tok, b) for b in blocks)))
    if args.json:
        _emit_json({name: n for name, n in counts})
    elif len(counts) == 1:
        _emit(str(counts[0][1]))
    else:
        from ..inspect import format_table

        _emit(format_table(["tokens", "tokenizer"], [[n, name] for name, n in counts], align="rl"))
    return 0


# ---------------------------------------------------------------- inspection commands


def cmd_pieces(args: argparse.Namespace) -> int:
    from ..inspect import pieces

    _, tok = _one_tokenizer(args)
    text = _joined_text(args)
    result = pieces(tok, text, allowed_special="all" if args.allow_special else ())
    if args.html:
        from ..html import write_pieces_html

        write_pieces_html(result, args.html)
        if not args.json:
            _emit(f"wrote {args.html} ({len(result):,} tokens)")
            return 0
    if args.json:
        _emit_json(result.to_dict())
        return 0
    _emit(_boundaries(result, _use_color(args)))
    _emit()
    _show_result(result, args)
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from ..inspect import trace

    texts = [t for _, t in _texts(args)]
    with _Busy(args, "training and tracing"):
        result = trace(texts, args.merges, pattern=None if args.pattern == "none" else args.pattern)
    _show_result(result, args)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..inspect import sweep

    if args.sizes and args.merges:
        raise UsageError("give --sizes or --merges, not both")
    sizes = _int_list(args.sizes, "--sizes") if args.sizes else None
    merges = _int_list(args.merges, "--merges") if args.merges else None
    eval_text: list[str] | None = None
    if args.eval:
        eval_text = [str(_decode_input(Path(f).read_bytes(), f, False)) for f in args.eval]
    if getattr(args, "tokenizers", None):
        _, tok = _one_tokenizer(args)
        if eval_text is None:
            eval_text = [t for _, t in _texts(args)]
        elif args.files or args.text:
            raise UsageError("with -e/-t the input is the evaluation text; drop --eval or the input")
        if sizes is None and merges is None:
            sizes = _doubling(256 + len(tok.special_tokens), tok.n_vocab)
        source: Any = tok
    else:
        source = [t for _, t in _texts(args)]
        if sizes is None and merges is None:
            merges = [0, 64, 128, 256, 512]
    pattern = None if args.pattern == "none" else args.pattern
    with _Busy(args, "sweeping"):
        result = sweep(source, sizes, eval_text, merges=merges, pattern=pattern)
    if args.plot:
        from ..plot import plot_sweep

        plot_sweep(result, args.plot)
    _show_result(result, args)
    if args.plot and not args.json:
        _emit(f"wrote {args.plot}")
    return 0


def _doubling(lo: int, hi: int) -> list[int]:
    out, v = [], lo
    while v < hi:
        out.append(v)
        v *= 2
    return out + [hi]


def cmd_ranks(args: argparse.Namespace) -> int:
    from ..inspect import word_ranks

    _, tok = _one_tokenizer(args)
    if not args.words:
        raise UsageError("give the words to look up, e.g. bytepair ranks ' the' ' Luna'")
    _show_result(word_ranks(tok, args.words), args)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ..inspect import compare

    texts = dict(_texts(args))
    toks = dict(_tokenizers(args, default=BUNDLED))
    result = compare(texts, toks)
    if args.plot:
        from ..plot import plot_compare

        plot_compare(result, args.plot)
    _show_result(result, args)
    if args.plot and not args.json:
        _emit(f"wrote {args.plot}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ..inspect import evaluate

    text = [t for _, t in _texts(args)]
    results = [evaluate(tok, text) for _, tok in _tokenizers(args)]
    if args.json:
        _emit_json([r.to_dict() for r in results])
        return 0
    from ..inspect import format_table

    rows = []
    for r in results:
        rows.append([r.tokenizer, r.tokens, r.bytes_per_token, r.chars_per_token,
                     f"{100 * r.byte_fallback_share:.2f}%", f"{100 * r.unknown_share:.2f}%"])
    _emit(format_table(["tokenizer", "tokens", "bytes/token", "chars/token", "byte fallback", "unknown"], rows))
    return 0


# ---------------------------------------------------------------- convert / bench


def cmd_convert(args: argparse.Namespace) -> int:
    try:
        import bytepair

        convert = getattr(bytepair, "convert", None)
        if convert is not None and not callable(convert):  # the module, not the function
            convert = getattr(convert, "convert", None)
    except ImportError:  # pragma: no cover
        convert = None
    if convert is None:
        raise UsageError("conversion is not available in this build of bytepair (bytepair.convert is missing)")
    kw: dict = {}
    if args.check_text:
        kw["check_text"] = str(_decode_input(Path(args.check_text).read_bytes(), args.check_text, False))
    if not os.path.exists(args.source):
        from ..registry import list_encoding_names

        if args.source not in list_encoding_names():
            raise FileNotFoundError(2, "No such file or directory (nor a bundled encoding name)", args.source)
    if args.pattern is not None:
        kw["pattern"] = args.pattern
    if args.preset is not None:
        kw["preset"] = args.preset
    if args.special:
        specials = {}
        for item in args.special:
            tok, sep, num = item.rpartition("=")
            if not sep or not tok or not num.isdigit():
                raise UsageError(f"--special takes TOKEN=ID, got {item!r}")
            specials[tok] = int(num)
        kw["special_tokens"] = specials
    report = convert(args.source, args.destination, to=args.to, **kw)
    summary = getattr(report, "summary", None)
    _emit(summary() if callable(summary) else f"wrote {args.destination}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from ..registry import get_encoding

    name = args.encoding
    if args.files:
        texts = _texts(args)
        label = ", ".join(lb for lb, _ in texts)
        text = "".join(t for _, t in texts)
    else:
        label = "the bundled sample"
        text = _sample_path().read_text(encoding="utf-8")
    n_bytes = len(text.encode("utf-8"))
    ours = get_encoding(name)
    engines: list[tuple[str, Callable[[str], list[int]]]] = [(f"bytepair {_version()}", ours.encode_ordinary)]
    tt = _tiktoken_encoding(name, ours)
    if tt is not None:
        import tiktoken

        engines.append((f"tiktoken {tiktoken.__version__}", tt.encode_ordinary))
    rows: list[dict[str, Any]] = []
    reference_ids: list[int] | None = None
    for label_e, fn in engines:
        best = float("inf")
        ids: list[int] = []
        for _ in range(max(1, args.repeat)):
            t0 = time.perf_counter()
            ids = fn(text)
            best = min(best, time.perf_counter() - t0)
        same = None if reference_ids is None else ids == reference_ids
        if reference_ids is None:
            reference_ids = ids
        rows.append({"engine": label_e, "seconds": best, "mb_per_s": n_bytes / best / 1e6, "tokens": len(ids),
                     "same_ids": same})
    if args.json:
        _emit_json({"text": label, "bytes": n_bytes, "encoding": name, "results": rows})
        return 0
    from ..inspect import format_table

    _emit(f"encode_ordinary on {label} ({n_bytes:,} bytes) with {name}, best of {args.repeat}")
    _emit(format_table(["engine", "MB/s", "tokens", "same ids"],
                       [[r["engine"], r["mb_per_s"], r["tokens"], "-" if r["same_ids"] is None else r["same_ids"]]
                        for r in rows]))
    if len(rows) > 1:
        _emit(f"bytepair is {rows[0]['mb_per_s'] / rows[1]['mb_per_s']:.2f}x tiktoken's speed"
              " (one run on a shared machine: expect noise)")
    else:
        _emit("tiktoken is not installed: nothing to compare with (pip install tiktoken)")
    return 0


def _version() -> str:
    try:
        from .. import __version__

        return __version__
    except ImportError:  # pragma: no cover
        return ""


def _tiktoken_encoding(name: str, ours: Any) -> Any:
    """A tiktoken Encoding built offline from bytepair's bundled rank file, or None."""
    try:
        import tiktoken
    except ImportError:
        return None
    import base64

    from ..registry import read_bundled_ranks

    ranks = {}
    for line in read_bundled_ranks(name).splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return tiktoken.Encoding(name=f"{name}-offline", pat_str=ours.pattern, mergeable_ranks=ranks,
                             special_tokens=ours.special_tokens)


# ---------------------------------------------------------------- parser


class _RenamingSubparsers:
    """Lets another module add subcommands, renaming any whose name is taken
    (``count`` from the distributed tools becomes ``count-chunks``)."""

    RENAME: ClassVar[dict[str, str]] = {"count": "count-chunks"}

    def __init__(self, sub: Any, taken: Iterable[str]) -> None:
        self._sub = sub
        self._taken = set(taken)

    def add_parser(self, name: str, **kw: Any) -> argparse.ArgumentParser:
        if name in self._taken:
            name = self.RENAME.get(name, name + "-distributed")
        kw["aliases"] = [a for a in kw.get("aliases", []) if a not in self._taken]
        self._taken.add(name)
        return self._sub.add_parser(name, **kw)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._sub, attr)


_EPILOG = """\
examples:
  bytepair train                                   train on the bundled sample
  bytepair count -e gpt2 -e o200k_base README.md   count tokens
  bytepair pieces -e gpt2 --text "토큰"             see every token's bytes
  bytepair trace --text "low lower lowest" --merges 4
  bytepair compare --text "Hello" --text "안녕하세요" --plot compare.png
  bytepair decode -e gpt2 --stream 169 228 254 169 223 108

Run 'bytepair COMMAND --help' for a command's options.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every ``bytepair`` command."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an error")
    common.add_argument("--color", choices=["auto", "always", "never"], default=argparse.SUPPRESS,
                        help="colour tables and token boundaries (default: auto, only in a terminal)")
    jsonp = argparse.ArgumentParser(add_help=False)
    jsonp.add_argument("--json", action="store_true", help="print JSON for scripts")

    p = argparse.ArgumentParser(
        prog="bytepair",
        description="Train, run and inspect byte-level BPE tokenizers (tiktoken-exact, offline).",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"bytepair {_version()}")
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour tables and token boundaries (default: auto, only in a terminal)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Callable[[argparse.Namespace], int], help: str, description: str,
            json_out: bool = True) -> argparse.ArgumentParser:
        parents = [common, jsonp] if json_out else [common]
        sp = sub.add_parser(name, help=help, description=description, parents=parents)
        sp.set_defaults(func=func)
        return sp

    t = add("train", cmd_train, "train a tokenizer (default corpus: the bundled English+Korean sample)",
            "Train a byte-level BPE tokenizer and write it as a bytepair JSON file. With no input it trains "
            "on the bundled sample (Jane Austen + the Constitution of the Republic of Korea).")
    t.add_argument("files", nargs="*", metavar="FILE", help="UTF-8 text files (default: the bundled sample)")
    t.add_argument("--text", metavar="STRING", help="train on this text instead of files")
    t.add_argument("--counts", metavar="FILE", help="train from a chunk-count file (bytepair count-chunks)")
    t.add_argument("--vocab-size", type=int, default=2048, help="256 bytes + merges + special tokens (default 2048)")
    t.add_argument("--pattern", default="o200k", help="pre-tokenization: gpt2 | cl100k | o200k | none | a regex")
    t.add_argument("--special", action="append", metavar="TOKEN",
                   help="a special token (repeatable; default <|endoftext|>)")
    t.add_argument("--min-frequency", type=int, default=1, help="stop when the best pair is rarer")
    t.add_argument("--max-token-length", type=int, default=None, help="longest token in bytes")
    t.add_argument("--threads", type=int, default=None, help="worker threads, when the trainer supports it")
    t.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    t.add_argument("-o", "--output", default="tokenizer.bytepair.json", help="where to write the tokenizer")

    e = add("encode", cmd_encode, "text to token ids",
            "Encode text to token ids, printed space-separated (one line per input). Special-token text is "
            "plain text unless --allow-special is given.")
    _add_tokenizer_options(e)
    _add_input_options(e, what="text to encode")
    e.add_argument("--bytes", action="store_true", help="accept binary (non-UTF-8) input and encode its raw bytes")
    e.add_argument("--allow-special", action="store_true", help="special-token text becomes its special id")

    d = add("decode", cmd_decode, "token ids to text",
            "Decode token ids (arguments, or whitespace/comma-separated or a JSON list on stdin).")
    _add_tokenizer_options(d)
    d.add_argument("ids", nargs="*", metavar="ID", help="token ids")
    d.add_argument("--stream", action="store_true",
                   help="show what an incremental decoder emits after each id (never half a character)")
    d.add_argument("--bytes", action="store_true", help="write the raw bytes instead of text")

    c = add("count", cmd_count, "count tokens of text",
            "Count the tokens of the input under one or more tokenizers (no ids are kept).")
    _add_tokenizer_options(c, many=True)
    _add_input_options(c, what="text to count")

    pc = add("pieces", cmd_pieces, "show every token: id, bytes, text, complete UTF-8 or not",
             "Show the input cut into tokens: boundaries, then one row per token (id, bytes in hex, text, "
             "whether it is a whole UTF-8 sequence). --html writes a self-contained page.")
    _add_tokenizer_options(pc)
    _add_input_options(pc, what="text to cut into tokens")
    pc.add_argument("--html", metavar="OUT.html", help="write a page that colours token boundaries")
    pc.add_argument("--allow-special", action="store_true", help="special-token text becomes its special id")

    tr = add("trace", cmd_trace, "train a few merges on a text and show every step",
             "Train on the input and show each merge: the pair, how often it occurred, and the text's tokens "
             "after it.")
    _add_input_options(tr, what="training text")
    tr.add_argument("--merges", type=int, default=10, help="number of merges (default 10)")
    tr.add_argument("--pattern", default="none",
                    help="pre-tokenization: none (default: merges may cross spaces) | gpt2 | cl100k | o200k | regex")

    sw = add("sweep", cmd_sweep, "token count against vocab size (truncating one merge list)",
             "Count the tokens of a text at several vocab sizes of one merge list. Without -e/-t the input is "
             "trained once to the largest size and truncated; with -e/-t that tokenizer is truncated and the "
             "input is the text to count.")
    _add_tokenizer_options(sw)
    _add_input_options(sw, what="training text (or, with -e/-t, the text to count)")
    sw.add_argument("--sizes", metavar="N,N,...", help="vocab sizes")
    sw.add_argument("--merges", metavar="N,N,...", help="merge counts (instead of --sizes)")
    sw.add_argument("--eval", action="append", metavar="FILE", help="count tokens of this file (default: the input)")
    sw.add_argument("--pattern", default="o200k", help="pre-tokenization for training (gpt2 | cl100k | o200k | none)")
    sw.add_argument("--plot", metavar="OUT.png", help="draw tokens and vocab size against merges (needs matplotlib)")

    rk = add("ranks", cmd_ranks, "the merge at which words became one token",
             "For each word, the merge number and id that made it a single token, or its pieces if it never "
             "became one. Mind leading spaces: ' the' and 'the' are different tokens.")
    _add_tokenizer_options(rk)
    rk.add_argument("words", nargs="*", metavar="WORD")

    cp = add("compare", cmd_compare, "tokens per text and tokenizer (e.g. languages, generations)",
             "Tokens, bytes per token and characters per token of each input under each tokenizer, and the "
             "ratio to the first input (Korean vs English on parallel texts, say). Default tokenizers: the "
             "three bundled encodings.")
    _add_tokenizer_options(cp, many=True, default=", ".join(BUNDLED))
    _add_input_options(cp, what="texts to compare, one per file", texts=True)
    cp.add_argument("--plot", metavar="OUT.png", help="draw bytes per token as bars (needs matplotlib)")

    ev = add("evaluate", cmd_evaluate, "bytes per token and byte-fallback share on held-out text",
             "Evaluate tokenizers on held-out text: bytes and characters per token, the share of tokens that "
             "are pieces of a character (byte fallback) and of unknown tokens.")
    _add_tokenizer_options(ev, many=True)
    _add_input_options(ev, what="held-out text")

    cv = add("convert", cmd_convert, "convert a tokenizer file to another format (verified)",
             "Write a tokenizer (file or bundled encoding name) in another format, re-load it and check that "
             "it gives the same ids.", json_out=False)
    cv.add_argument("source", metavar="IN", help="a tokenizer file or a bundled encoding name")
    cv.add_argument("destination", metavar="OUT")
    cv.add_argument("--to", required=True, choices=["bytepair", "tiktoken", "hf", "gpt2"], help="output format")
    cv.add_argument("--check-text", metavar="FILE", help="text to verify the conversion on")
    cv.add_argument("--pattern", help="pre-tokenization pattern for a .tiktoken input that is not a bundled file "
                    "(gpt2 | cl100k | o200k | none | a regex)")
    cv.add_argument("--preset", choices=["gpt2", "r50k_base", "cl100k_base", "o200k_base"],
                    help="take pattern and special tokens of a bundled encoding (for a .tiktoken input)")
    cv.add_argument("--special", action="append", metavar="TOKEN=ID",
                    help="a special token of a .tiktoken input (repeatable)")

    b = add("bench", cmd_bench, "quick speed check of bytepair against tiktoken",
            "Encode a text with bytepair and (if installed) tiktoken in this process and print MB/s. For real "
            "benchmarks see benches/.")
    b.add_argument("-e", "--encoding", default=DEFAULT_ENCODING, choices=list(BUNDLED))
    b.add_argument("files", nargs="*", metavar="FILE", help="text to encode (default: the bundled sample)")
    b.add_argument("--repeat", type=int, default=3, help="runs per engine; the best counts (default 3)")

    try:
        from ..distributed.cli import register  # type: ignore[import-not-found]
    except ImportError:
        pass
    else:
        register(_RenamingSubparsers(sub, sub.choices))
    return p


# ---------------------------------------------------------------- main


def _message(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        msg = f"{e.filename}: {e.strerror}"
    elif isinstance(e, KeyError) and type(e) is KeyError and e.args:
        msg = str(e.args[0])
    else:
        msg = str(e) or type(e).__name__
    return " ".join(msg.split())


def main(argv: list[str] | None = None) -> int:
    """Runs the command line; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
