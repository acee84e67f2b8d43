"""The inspection commands: ``pieces``, ``trace``, ``sweep``, ``ranks``, ``compare``, ``evaluate``,
and the vocabulary commands ``diff`` (what two tokenizers disagree on) and ``audit`` (tokens no
text can produce, unused tokens, duplicate spellings): each one call in :mod:`bytepair.inspect`,
shown as a table or JSON."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..inspect import audit, compare, diff, evaluate, sweep, trace, word_ranks
from ..inspect.common import tokenizer_name
from ..inspect.pieces import Pieces, describe_pieces, piece_ids, pieces
from ..registry import list_encoding_names
from ..render import format_table
from ..render.html import write_pieces_html
from ..render.plot import plot_compare, plot_sweep
from .common import (
    BUNDLED,
    Busy,
    UsageError,
    add_command,
    add_input_options,
    add_special_option,
    add_tokenizer_options,
    allowed_special,
    boundaries,
    check_cli_outputs,
    emit,
    emit_json,
    int_list,
    load_tokenizer,
    load_tokenizers,
    nonnegative_int,
    one_tokenizer,
    pattern_value,
    read_joined_text,
    read_path_texts,
    read_texts,
    show_result,
    unescape,
    use_color,
)

#: Tokens ``pieces`` shows when writing to a terminal and no --limit is given (about a screenful).
SCREEN_TOKENS = 40
#: Rows per block when streaming a long ``pieces`` listing into a pipe.
STREAM_BLOCK = 4096


def cmd_pieces(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit must be at least 0 (0 shows every token), got {args.limit}")
    if args.html:
        check_cli_outputs(args, [("--html", args.html)])
    _, tok = one_tokenizer(args)
    text = read_joined_text(args)
    allowed = allowed_special(args)
    if args.html:
        result = pieces(tok, text, allowed_special=allowed, limit=args.limit or None)
        write_pieces_html(result, args.html)
        if not args.json:
            emit(f"wrote {args.html} ({result.total:,} tokens)")
            return 0
    to_terminal = bool(getattr(sys.stdout, "isatty", lambda: False)())
    limit = args.limit
    if limit is None:
        limit = SCREEN_TOKENS if to_terminal and not args.json else 0
    if args.json:
        emit_json(pieces(tok, text, allowed_special=allowed, limit=limit or None).to_dict())
        return 0
    ids, special_ids, chars = piece_ids(tok, text, allowed)
    shown = ids[:limit] if limit else ids
    if len(shown) <= STREAM_BLOCK:
        result = Pieces(tokenizer_name(tok), text, describe_pieces(tok, shown, special_ids, chars), total=len(ids))
        emit(boundaries(result, use_color(args)))
        emit()
        show_result(result, args)
        if limit and len(ids) > limit:
            emit(f"... {len(ids) - limit:,} more tokens (--limit N to show more, --limit 0 for all)")
        return 0
    # long listings stream block by block: boundaries, then the table (columns sized per block)
    color = use_color(args)
    pos = 0
    blocks = []
    for first in range(0, len(shown), STREAM_BLOCK):
        part = describe_pieces(tok, shown[first:first + STREAM_BLOCK], special_ids, chars[first:first + STREAM_BLOCK],
                               first, pos)
        pos = part[-1].start + len(part[-1].bytes)
        blocks.append((first, part[0].start))
        if first and not color:
            sys.stdout.write("|")
        sys.stdout.write(boundaries(Pieces("", "", part), color))
    emit()
    emit()
    head = Pieces(tokenizer_name(tok), text, [], total=len(ids))
    title = head._table()[0] or ""
    emit(title + (f" (the first {len(shown):,} shown)" if len(shown) < len(ids) else ""))
    for n, (first, start) in enumerate(blocks):
        part = describe_pieces(tok, shown[first:first + STREAM_BLOCK], special_ids, chars[first:first + STREAM_BLOCK],
                               first, start)
        _, headers, rows = Pieces("", "", part)._table()
        lines = format_table(headers, rows).split("\n")
        emit("\n".join(lines if n == 0 else lines[1:]))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    texts = [t for _, t in read_texts(args)]
    with Busy(args, "training and tracing"):
        result = trace(texts, args.merges, pattern=pattern_value(args.pattern))
    show_result(result, args)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.sizes and args.merges:
        raise UsageError("give --sizes or --merges, not both")
    sizes = int_list(args.sizes, "--sizes") if args.sizes else None
    merges = int_list(args.merges, "--merges") if args.merges else None
    eval_text: list[str] | None = None
    if args.plot:
        check_cli_outputs(args, [("--plot", args.plot)], [("the --eval file", f) for f in args.eval or []])
    if args.eval:
        eval_text = read_path_texts(args.eval)
    if getattr(args, "tokenizers", None):
        _, tok = one_tokenizer(args)
        if eval_text is None:
            eval_text = [t for _, t in read_texts(args)]
        elif args.files or args.text:
            raise UsageError("with -e/-t the input is the evaluation text; drop --eval or the input")
        if sizes is None and merges is None:
            sizes = _doubling(256 + len(tok.special_tokens), tok.n_vocab)
        source: Any = tok
    else:
        source = [t for _, t in read_texts(args)]
        if sizes is None and merges is None:
            merges = [0, 64, 128, 256, 512]
    pattern = pattern_value(args.pattern if args.pattern is not None else "o200k")
    with Busy(args, "sweeping"):
        result = sweep(source, sizes, eval_text, merges=merges, pattern=pattern, allowed_special=allowed_special(args))
    if args.plot:
        plot_sweep(result, args.plot)
    show_result(result, args)
    if args.plot and not args.json:
        emit(f"wrote {args.plot}")
    return 0


def _doubling(lo: int, hi: int) -> list[int]:
    out, v = [], lo
    while v < hi:
        out.append(v)
        v *= 2
    return out + [hi]


def cmd_ranks(args: argparse.Namespace) -> int:
    _, tok = one_tokenizer(args)
    if not args.words:
        raise UsageError("give the words to look up, e.g. bytepair ranks ' the' ' Luna'")
    show_result(word_ranks(tok, args.words), args)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    if args.plot:
        check_cli_outputs(args, [("--plot", args.plot)])
    texts = dict(read_texts(args))
    toks = dict(load_tokenizers(args, default=BUNDLED))
    result = compare(texts, toks, allowed_special=allowed_special(args))
    if args.plot:
        plot_compare(result, args.plot)
    show_result(result, args)
    if args.plot and not args.json:
        emit(f"wrote {args.plot}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    text = [t for _, t in read_texts(args)]
    if not any(text):
        raise UsageError("the held-out text is empty: there is nothing to evaluate on")
    results = [evaluate(tok, text, allowed_special=allowed_special(args)) for _, tok in load_tokenizers(args)]
    if args.json:
        emit_json([r.to_dict() for r in results])
        return 0
    rows = []
    for r in results:
        rows.append([r.tokenizer, r.tokens, r.bytes_per_token, r.chars_per_token,
                     f"{100 * r.byte_fallback_share:.2f}%", f"{100 * r.unknown_share:.2f}%"])
    emit(format_table(["tokenizer", "tokens", "bytes/token", "chars/token", "byte fallback", "unknown"], rows))
    return 0


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
        sep = None if documents == "none" else unescape(documents, "--documents")
        docs = []
        for text in read_path_texts(args.text):
            docs.extend(_documents(text, sep))
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


def _add_vocabulary_parsers(subparsers: Any) -> None:
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


def add_parsers(subparsers: Any) -> None:
    pc = add_command(subparsers, "pieces", cmd_pieces, "show every token: id, bytes, text, complete UTF-8 or not",
                     "Show the input cut into tokens: boundaries, then one row per token (id, bytes in hex, text, "
                     "whether it is a whole UTF-8 sequence). --html writes a self-contained page.")
    add_tokenizer_options(pc)
    add_input_options(pc, what="text to cut into tokens")
    pc.add_argument("--html", metavar="OUT.html", help="write a page that colours token boundaries")
    add_special_option(pc)
    pc.add_argument("--limit", "--head", type=nonnegative_int("--limit/--head"), default=None, metavar="N",
                    help=f"show the first N tokens (default: {SCREEN_TOKENS} in a terminal, all when piped; 0: all)")

    tr = add_command(subparsers, "trace", cmd_trace, "train a few merges on a text and show every step",
                     "Train on the input and show each merge: the pair, how often it occurred, and the text's tokens "
                     "after it.")
    add_input_options(tr, what="training text")
    tr.add_argument("--merges", type=nonnegative_int("--merges"), default=10, help="number of merges (default 10)")
    tr.add_argument("--pattern", default="none",
                    help="pre-tokenization: none (default: merges may cross spaces) | gpt2 | cl100k | o200k | regex")

    sw = add_command(subparsers, "sweep", cmd_sweep, "token count against vocab size (truncating one merge list)",
                     "Count the tokens of a text at several vocab sizes of one merge list. Without -e/-t the input is "
                     "trained once to the largest size and truncated; with -e/-t that tokenizer is truncated and the "
                     "input is the text to count.")
    add_tokenizer_options(sw, pattern=False)
    add_input_options(sw, what="training text (or, with -e/-t, the text to count)")
    sw.add_argument("--sizes", metavar="N,N,...", help="vocab sizes")
    sw.add_argument("--merges", metavar="N,N,...", help="merge counts (instead of --sizes)")
    sw.add_argument("--eval", action="append", metavar="FILE", help="count tokens of this file (default: the input)")
    sw.add_argument("--pattern", default=None,
                    help="pre-tokenization for training (gpt2 | cl100k | o200k (default) | none | a regex); "
                         "with -t a .tiktoken file, that file's pattern")
    add_special_option(sw)
    sw.add_argument("--plot", metavar="OUT.png", help="draw tokens and vocab size against merges (needs matplotlib)")

    rk = add_command(subparsers, "ranks", cmd_ranks, "the merge at which words became one token",
                     "For each word, the merge number and id that made it a single token, or its pieces if it never "
                     "became one. Mind leading spaces: ' the' and 'the' are different tokens.")
    add_tokenizer_options(rk)
    rk.add_argument("words", nargs="*", metavar="WORD")

    cp = add_command(subparsers, "compare", cmd_compare, "tokens per text and tokenizer (e.g. languages, generations)",
                     "Tokens, bytes per token and characters per token of each input under each tokenizer, and the "
                     "ratio to the first input (Korean vs English on parallel texts, say). Default tokenizers: the "
                     "three bundled encodings.")
    add_tokenizer_options(cp, many=True, default=", ".join(BUNDLED))
    add_input_options(cp, what="texts to compare, one per file", texts=True)
    add_special_option(cp)
    cp.add_argument("--plot", metavar="OUT.png", help="draw bytes per token as bars (needs matplotlib)")

    ev = add_command(subparsers, "evaluate", cmd_evaluate, "bytes per token and byte-fallback share on held-out text",
                     "Evaluate tokenizers on held-out text: bytes and characters per token, the share of tokens that "
                     "are pieces of a character (byte fallback) and of unknown tokens.")
    add_tokenizer_options(ev, many=True)
    add_input_options(ev, what="held-out text")
    add_special_option(ev)
    _add_vocabulary_parsers(subparsers)
