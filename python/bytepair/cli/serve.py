"""``bytepair serve``: the local web page (Tokens, Train, Compare tabs)."""

from __future__ import annotations

import argparse
import warnings
from typing import Any

from ..registry import list_encoding_names
from .common import BUNDLED, Busy, UsageError, add_command, check_file_options, load_tokenizer


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        raise UsageError(f"bytepair serve needs the serve extra ({e.name} is missing): "
                         "pip install 'bytepair[serve]'") from None
    from .. import serve as web  # needs the serve extra (starlette, uvicorn)

    specs = list(getattr(args, "tokenizers", None) or [])
    check_file_options(args, specs)
    if not any(k == "e" for k, _ in specs):
        specs = [("e", name) for name in BUNDLED] + specs  # -t alone adds files to the bundled encodings
    web.bind(args.host, args.port).close()  # a taken port fails before the tokenizers load
    if not web.loopback(args.host):
        warnings.warn(f"--host {args.host} opens the page to every machine that can reach this one "
                      "(no password); use the default 127.0.0.1 to keep it on this machine", stacklevel=1)
    toks: dict[str, Any] = {}
    for kind, value in specs:
        with Busy(args, f"loading {value}"):
            name, tok = load_tokenizer(kind, value, args)
        while name in toks:
            name += "'"
        toks[name] = tok
    web.serve(toks, args.host, args.port, open_browser=args.open)
    return 0


class _TokenizerSpec(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        items = list(getattr(namespace, self.dest, None) or [])
        kind = "e" if option_string in ("-e", "--encoding") else "t"
        items.extend((kind, v) for v in values)
        setattr(namespace, self.dest, items)


def add_parsers(subparsers: Any) -> None:
    s = add_command(subparsers, "serve", cmd_serve, "a local web page: tokens as you type, training steps, comparisons",
                    "Serve a web page on this machine (offline: every asset ships with bytepair) with three tabs: "
                    "Tokens (the text cut by each tokenizer as you type, with a share link), Train (step through "
                    "the merges of a small corpus, download the tokenizer) and Compare (one sentence in several "
                    "languages across tokenizers). Tokenizers: the bundled encodings, or those given with -e, plus "
                    "tokenizer files given with -t (read once, at start). Needs the serve extra: "
                    "pip install 'bytepair[serve]'.", json_out=False)
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: only this machine; 0.0.0.0 opens it to the network)")
    s.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    s.add_argument("-e", "--encoding", dest="tokenizers", action=_TokenizerSpec, nargs="+", metavar="NAME",
                   help=f"bundled encodings to offer ({', '.join(list_encoding_names())}; "
                        f"default: {', '.join(BUNDLED)})")
    s.add_argument("-t", "--tokenizer", dest="tokenizers", action=_TokenizerSpec, nargs="+", metavar="FILE",
                   help="tokenizer files to offer as well")
    s.add_argument("--preset", metavar="NAME", choices=list_encoding_names(),
                   help="for -t .tiktoken files: take pattern and special tokens from this bundled encoding")
    s.add_argument("--pattern", metavar="PATTERN",
                   help="for -t .tiktoken or GPT-2 files: their pre-tokenization (gpt2 | cl100k | o200k | none | a regex)")
    s.add_argument("--open", action="store_true", help="open the page in the default browser")
