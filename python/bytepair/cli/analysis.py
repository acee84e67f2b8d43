"""The inspection commands: ``pieces``, ``trace``, ``sweep``, ``ranks``, ``compare``, ``evaluate``
(each one call in :mod:`bytepair.inspect`, shown as a table or JSON)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..render import format_table
from .common import (
    BUNDLED,
    Busy,
    UsageError,
    add_command,
    add_input_options,
    add_tokenizer_options,
    boundaries,
    decode_input,
    emit,
    emit_json,
    int_list,
    load_tokenizers,
    one_tokenizer,
    read_joined_text,
    read_texts,
    show_result,
    use_color,
)


def cmd_pieces(args: argparse.Namespace) -> int:
    from ..inspect import pieces

    _, tok = one_tokenizer(args)
    text = read_joined_text(args)
    result = pieces(tok, text, allowed_special="all" if args.allow_special else ())
    if args.html:
        from ..html import write_pieces_html

        write_pieces_html(result, args.html)
        if not args.json:
            emit(f"wrote {args.html} ({len(result):,} tokens)")
            return 0
    if args.json:
        emit_json(result.to_dict())
        return 0
    emit(boundaries(result, use_color(args)))
    emit()
    show_result(result, args)
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from ..inspect import trace

    texts = [t for _, t in read_texts(args)]
    with Busy(args, "training and tracing"):
        result = trace(texts, args.merges, pattern=None if args.pattern == "none" else args.pattern)
    show_result(result, args)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..inspect import sweep

    if args.sizes and args.merges:
        raise UsageError("give --sizes or --merges, not both")
    sizes = int_list(args.sizes, "--sizes") if args.sizes else None
    merges = int_list(args.merges, "--merges") if args.merges else None
    eval_text: list[str] | None = None
    if args.eval:
        eval_text = [str(decode_input(Path(f).read_bytes(), f, False)) for f in args.eval]
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
    pattern = None if args.pattern == "none" else args.pattern
    with Busy(args, "sweeping"):
        result = sweep(source, sizes, eval_text, merges=merges, pattern=pattern)
    if args.plot:
        from ..plot import plot_sweep

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
    from ..inspect import word_ranks

    _, tok = one_tokenizer(args)
    if not args.words:
        raise UsageError("give the words to look up, e.g. bytepair ranks ' the' ' Luna'")
    show_result(word_ranks(tok, args.words), args)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from ..inspect import compare

    texts = dict(read_texts(args))
    toks = dict(load_tokenizers(args, default=BUNDLED))
    result = compare(texts, toks)
    if args.plot:
        from ..plot import plot_compare

        plot_compare(result, args.plot)
    show_result(result, args)
    if args.plot and not args.json:
        emit(f"wrote {args.plot}")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from ..inspect import evaluate

    text = [t for _, t in read_texts(args)]
    results = [evaluate(tok, text) for _, tok in load_tokenizers(args)]
    if args.json:
        emit_json([r.to_dict() for r in results])
        return 0
    rows = []
    for r in results:
        rows.append([r.tokenizer, r.tokens, r.bytes_per_token, r.chars_per_token,
                     f"{100 * r.byte_fallback_share:.2f}%", f"{100 * r.unknown_share:.2f}%"])
    emit(format_table(["tokenizer", "tokens", "bytes/token", "chars/token", "byte fallback", "unknown"], rows))
    return 0


def add_parsers(subparsers: Any) -> None:
    pc = add_command(subparsers, "pieces", cmd_pieces, "show every token: id, bytes, text, complete UTF-8 or not",
                     "Show the input cut into tokens: boundaries, then one row per token (id, bytes in hex, text, "
                     "whether it is a whole UTF-8 sequence). --html writes a self-contained page.")
    add_tokenizer_options(pc)
    add_input_options(pc, what="text to cut into tokens")
    pc.add_argument("--html", metavar="OUT.html", help="write a page that colours token boundaries")
    pc.add_argument("--allow-special", action="store_true", help="special-token text becomes its special id")

    tr = add_command(subparsers, "trace", cmd_trace, "train a few merges on a text and show every step",
                     "Train on the input and show each merge: the pair, how often it occurred, and the text's tokens "
                     "after it.")
    add_input_options(tr, what="training text")
    tr.add_argument("--merges", type=int, default=10, help="number of merges (default 10)")
    tr.add_argument("--pattern", default="none",
                    help="pre-tokenization: none (default: merges may cross spaces) | gpt2 | cl100k | o200k | regex")

    sw = add_command(subparsers, "sweep", cmd_sweep, "token count against vocab size (truncating one merge list)",
                     "Count the tokens of a text at several vocab sizes of one merge list. Without -e/-t the input is "
                     "trained once to the largest size and truncated; with -e/-t that tokenizer is truncated and the "
                     "input is the text to count.")
    add_tokenizer_options(sw)
    add_input_options(sw, what="training text (or, with -e/-t, the text to count)")
    sw.add_argument("--sizes", metavar="N,N,...", help="vocab sizes")
    sw.add_argument("--merges", metavar="N,N,...", help="merge counts (instead of --sizes)")
    sw.add_argument("--eval", action="append", metavar="FILE", help="count tokens of this file (default: the input)")
    sw.add_argument("--pattern", default="o200k", help="pre-tokenization for training (gpt2 | cl100k | o200k | none)")
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
    cp.add_argument("--plot", metavar="OUT.png", help="draw bytes per token as bars (needs matplotlib)")

    ev = add_command(subparsers, "evaluate", cmd_evaluate, "bytes per token and byte-fallback share on held-out text",
                     "Evaluate tokenizers on held-out text: bytes and characters per token, the share of tokens that "
                     "are pieces of a character (byte fallback) and of unknown tokens.")
    add_tokenizer_options(ev, many=True)
    add_input_options(ev, what="held-out text")
