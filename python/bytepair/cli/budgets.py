"""``bytepair truncate`` and ``bytepair chunk``: cut a text to a token budget, or
split it into chunks that each fit (see :mod:`bytepair.budget`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..atomic import atomic_write_text
from ..budget import chunk_spans
from .common import (
    UsageError,
    add_command,
    add_input_options,
    add_tokenizer_options,
    check_cli_outputs,
    emit,
    emit_json,
    one_tokenizer,
    read_texts,
)


def _budget_args(args: argparse.Namespace) -> dict[str, Any]:
    if args.max_tokens < 1:
        raise UsageError(f"--max-tokens must be at least 1, got {args.max_tokens}")
    return {"allowed_special": "all" if args.allow_special else frozenset(), "disallowed_special": ()}


def cmd_truncate(args: argparse.Namespace) -> int:
    _, tok = one_tokenizer(args)
    kw = _budget_args(args)
    inputs = read_texts(args)
    if len(inputs) > 1:
        raise UsageError(f"truncate cuts one text; got {len(inputs)} inputs (give one FILE, --text or stdin)")
    text = inputs[0][1]
    out = tok.truncate_text(text, args.max_tokens, side=args.side, **kw)
    if args.json:
        emit_json({"text": out, "tokens": tok.count(out, **kw), "chars": len(out), "of_chars": len(text)})
        return 0
    sys.stdout.write(out)
    if out and not out.endswith("\n") and sys.stdout.isatty():
        sys.stdout.write("\n")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    name, tok = one_tokenizer(args)
    kw = _budget_args(args)
    if args.overlap < 0:
        raise UsageError(f"--overlap must be at least 0, got {args.overlap}")
    if args.overlap >= args.max_tokens:
        raise UsageError(f"--overlap ({args.overlap}) must be smaller than --max-tokens ({args.max_tokens})")
    lines: list[str] = []
    # each input on its own (as encode does): no chunk spans two inputs; start and end count in its input
    if args.output:
        check_cli_outputs(args, [("-o", args.output)])
    for label, text in read_texts(args):
        spans = chunk_spans(tok, text, args.max_tokens, overlap=args.overlap, boundary=args.boundary, **kw)
        for a, b in spans:
            chunk = text[a:b]
            lines.append(json.dumps({"index": len(lines), "input": label, "start": a, "end": b,
                                     "tokens": tok.count(chunk, **kw), "text": chunk}, ensure_ascii=False))
    body = "".join(line + "\n" for line in lines)
    if args.output:
        atomic_write_text(args.output, body)
        if args.json:
            emit_json({"chunks": len(lines), "output": args.output, "tokenizer": name})
        else:
            emit(f"wrote {args.output} ({len(lines):,} chunks of at most {args.max_tokens} tokens)")
    else:
        sys.stdout.write(body)
    return 0


def add_parsers(subparsers: Any) -> None:
    t = add_command(subparsers, "truncate", cmd_truncate, "cut text to at most N tokens",
            "Print the longest prefix (or, with --side start, suffix) of the input, cut at a character "
            "boundary, whose encoding has at most --max-tokens tokens. Exact: not decode(encode(text)[:N]).")
    add_tokenizer_options(t)
    add_input_options(t, what="text to truncate")
    t.add_argument("--max-tokens", type=int, required=True, metavar="N", help="the budget")
    t.add_argument("--side", choices=["end", "start"], default="end",
                   help="which side to cut: end keeps the beginning (default), start keeps the end")
    t.add_argument("--allow-special", action="store_true", help="special-token text becomes its special id")

    c = add_command(subparsers, "chunk", cmd_chunk, "split text into chunks of at most N tokens",
            "Split the input into chunks of at most --max-tokens tokens each, optionally overlapping by "
            "--overlap tokens and ending at line or paragraph breaks; one JSON object per chunk "
            "(index, input, start and end in characters of that input, tokens, text). Each input (file, "
            "--text) is chunked on its own.")
    add_tokenizer_options(c)
    add_input_options(c, what="text to chunk")
    c.add_argument("--max-tokens", type=int, required=True, metavar="N", help="the budget per chunk")
    c.add_argument("--overlap", type=int, default=0, metavar="N", help="tokens shared by consecutive chunks")
    c.add_argument("--boundary", choices=["token", "line", "paragraph"], default="token",
                   help="preferred cut: anywhere (token), after a newline (line) or a blank line (paragraph)")
    c.add_argument("-o", "--output", metavar="OUT.jsonl", help="write the chunks here (atomic) instead of stdout")
    c.add_argument("--allow-special", action="store_true", help="special-token text becomes its special id")
