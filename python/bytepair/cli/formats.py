"""``bytepair convert``: write a tokenizer in another format, verified by re-loading it."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..conversion import convert
from ..formats import detect
from ..registry import list_encoding_names
from .common import UsageError, add_command, decode_input, emit, positive_int

#: The source options and the file formats that take them (others store their own).
_SOURCE_OPTIONS = (("--pattern", "pattern", ("tiktoken", "gpt2")), ("--preset", "preset", ("tiktoken",)),
                   ("--special", "special", ("tiktoken", "gpt2")))


def _check_source_options(args: argparse.Namespace) -> None:
    """Refuses --pattern/--preset/--special for a source that cannot take them."""
    for flag, attr, formats in _SOURCE_OPTIONS:
        if getattr(args, attr) is None:
            continue
        kinds = " or ".join(".tiktoken" if f == "tiktoken" else "GPT-2 vocab.json + merges.txt" for f in formats)
        if not os.path.exists(args.source):
            raise UsageError(f"{flag} applies to a {kinds} source; {args.source} is a bundled encoding with its "
                             f"own pattern and special tokens: drop {flag}")
        fmt = detect(args.source)
        if fmt not in formats:
            raise UsageError(f"{flag} applies to a {kinds} source; {args.source} is a {fmt} file, which stores "
                             f"its own pattern and special tokens: drop {flag}")


def cmd_convert(args: argparse.Namespace) -> int:
    kw: dict = {}
    if args.check_text:
        kw["check_text"] = str(decode_input(Path(args.check_text).read_bytes(), args.check_text, False))
        if not kw["check_text"].strip():
            raise UsageError(f"--check-text {args.check_text} has no text to verify the conversion on")
    if not os.path.exists(args.source) and args.source not in list_encoding_names():
        raise FileNotFoundError(2, "No such file or directory (nor a bundled encoding name)", args.source)
    _check_source_options(args)
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
            if len(num) > 10 or int(num) >= 2**32:
                raise UsageError(f"--special {item!r}: ids are 32-bit, 0 to {2**32 - 1:,}")
            specials[tok] = int(num)
        kw["special_tokens"] = specials
    for role in ("bos", "eos", "pad"):
        value = getattr(args, role)
        if value is not None:
            if args.to != "transformers":
                raise UsageError(f"--{role} applies to --to transformers only")
            kw[f"{role}_token"] = value
    if args.model_max_length is not None:
        if args.to != "transformers":
            raise UsageError("--model-max-length applies to --to transformers only")
        kw["model_max_length"] = args.model_max_length
    report = convert(args.source, args.destination, to=args.to, **kw)
    emit(report.summary())
    return 0


def add_parsers(subparsers: Any) -> None:
    cv = add_command(subparsers, "convert", cmd_convert, "convert a tokenizer file to another format (verified)",
                     "Write a tokenizer (file or bundled encoding name) in another format, re-load it and check that "
                     "it gives the same ids.", json_out=False)
    cv.add_argument("source", metavar="IN", help="a tokenizer file or a bundled encoding name")
    cv.add_argument("destination", metavar="OUT")
    cv.add_argument("--to", required=True, choices=["bytepair", "tiktoken", "hf", "gpt2", "transformers"],
                    help="output format (transformers: a folder with tokenizer.json, tokenizer_config.json and "
                         "special_tokens_map.json for from_pretrained)")
    cv.add_argument("--check-text", metavar="FILE", help="text to verify the conversion on")
    cv.add_argument("--pattern", help="pre-tokenization pattern for a .tiktoken input that is not a bundled file "
                    "(gpt2 | cl100k | o200k | none | a regex)")
    cv.add_argument("--preset", choices=list_encoding_names(), metavar="NAME",
                    help="take pattern and special tokens of a bundled encoding (for a .tiktoken input)")
    cv.add_argument("--special", action="append", metavar="TOKEN=ID",
                    help="a special token of a .tiktoken input (repeatable)")
    for role in ("bos", "eos", "pad"):
        cv.add_argument(f"--{role}", metavar="TOKEN",
                        help=f"transformers: the special token used as {role}_token")
    cv.add_argument("--model-max-length", type=positive_int("--model-max-length"), metavar="N",
                    help="transformers: the model's context length")
