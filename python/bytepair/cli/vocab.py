"""The vocabulary commands: ``diff`` (what two tokenizers disagree on) and ``audit``
(tokens no text can produce, unused tokens, duplicate spellings)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..inspect import audit, diff
from ..registry import list_encoding_names
from .common import (
    Busy,
    UsageError,
    add_command,
    add_input_options,
    add_tokenizer_options,
    decode_input,
    emit,
    emit_json,
    load_tokenizer,
    nonnegative_int,
    one_tokenizer,
    read_texts,
)


def _tokenizer_arg(value: str) -> tuple[str, Any]:
    if value in list_encoding_names():
        return load_tokenizer("e", value)
    if os.path.exists(value):
        return load_tokenizer("t", value)
    raise UsageError(f"{value!r} is neither a bundled encoding ({', '.join(list_encoding_names())}) nor a file")


def _documents(text: str, sep: str | None) -> list[str]:
    if not sep:
        return [text]
    return [d for d in text.split(sep) if d.strip()]


def _text_limit(args: argparse.Namespace, default: int) -> int:
    """``--limit`` shortens the text listing; JSON lists everything, so the two are refused together."""
    if args.limit is not None and args.json:
        raise UsageError("--limit shortens the text listing; --json lists every item: drop one")
    return default if args.limit is None else args.limit


def cmd_diff(args: argparse.Namespace) -> int:
    limit = _text_limit(args, 10)
    (name_a, a), (name_b, b) = _tokenizer_arg(args.a), _tokenizer_arg(args.b)
    a.name, b.name = name_a, name_b  # the labels shown: what was typed (file names for files)
    docs: list[str] | None = None
    if args.documents is not None and not args.text:
        raise UsageError("--documents splits the --text files; give --text FILE")
    if args.text:
        documents = "\\n\\n" if args.documents is None else args.documents
        sep = None if documents == "none" else documents.encode().decode("unicode_escape")
        docs = []
        for f in args.text:
            docs.extend(_documents(str(decode_input(Path(f).read_bytes(), f, False)), sep))
    with Busy(args, "comparing"):
        result = diff(a, b, docs)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit(result.to_text(limit=limit))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    limit = _text_limit(args, 20)
    name, tok = one_tokenizer(args)
    texts = [t for _, t in read_texts(args, required=False)]
    with Busy(args, f"auditing {name}"):
        result = audit(tok, texts if texts else None)
    if args.json:
        emit_json(result.to_dict())
    else:
        emit(result.to_text(limit=limit))
    return 0


def add_parsers(subparsers: Any) -> None:
    d = add_command(subparsers, "diff", cmd_diff, "what two tokenizers disagree on (tokens, ids, merges, cuts)",
                    "Compare two tokenizers (bundled encoding names or tokenizer files): tokens only in one, "
                    "shared tokens with other ids, moved in merge order or built from another pair; with --text, "
                    "the token counts per document and the first documents cut differently, aligned.")
    d.add_argument("a", metavar="A", help="a bundled encoding name or a tokenizer file")
    d.add_argument("b", metavar="B", help="a bundled encoding name or a tokenizer file")
    d.add_argument("--text", action="append", metavar="FILE", help="UTF-8 text to encode with both (repeatable)")
    d.add_argument("--documents", default=None, metavar="SEP",
                   help="split --text files into documents at SEP (default: blank lines; 'none': one per file)")
    d.add_argument("--limit", type=nonnegative_int("--limit"), default=None, help="examples shown per kind of difference (default 10)")

    au = add_command(subparsers, "audit", cmd_audit, "tokens no text can produce, unused tokens, duplicate spellings",
                     "Audit one tokenizer's vocabulary: every mergeable token is produced as a whole piece, only "
                     "inside longer pieces, never (with the reason), or undecided; spelling variants (leading "
                     "space, case). With a corpus (FILE or --text), the tokens it never uses and their share.")
    add_tokenizer_options(au)
    add_input_options(au, what="a corpus to count unused tokens on")
    au.add_argument("--limit", type=nonnegative_int("--limit"), default=None, help="unreachable tokens listed (default 20)")
