"""``bytepair train``: train a tokenizer on files, text or a chunk-count file."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from .common import UsageError, add_command, emit, emit_json, sample_path


def cmd_train(args: argparse.Namespace) -> int:
    from .. import train

    if args.parity or args.dev:
        if not args.parity:
            raise UsageError("--dev goes with --parity LANG=FILE ...")
        from .grow import cmd_train_parity

        return cmd_train_parity(args)

    specials = args.special or ["<|endoftext|>"]
    pattern = None if args.pattern == "none" else args.pattern
    extra = {"min_frequency": args.min_frequency, "max_token_length": args.max_token_length}
    # train() draws its own progress bar unless told not to
    kw: dict = {"num_threads": args.threads or None, "progress": False if args.quiet or args.json else None}
    t0 = time.perf_counter()
    if args.counts:
        if args.files or args.text:
            raise UsageError("give either --counts FILE or training text, not both")
        from ..counts import ChunkCounts

        counts = ChunkCounts.load(args.counts)
        tok = train(None, args.vocab_size, counts=counts, special_tokens=specials, **extra, **kw)
        source = args.counts
        n_bytes = sum(len(c) * n for c, n in counts.items())
        n_tokens = sum(n * len(tok.encode_ordinary(c.decode("utf-8", "replace"))) for c, n in counts.items())
    else:
        if args.text:
            data: Any = [args.text]
            source = "--text"
        else:
            paths = [Path(p) for p in args.files] or [sample_path()]
            for p in paths:
                if not p.exists():
                    raise FileNotFoundError(2, "No such file or directory", str(p))
            data = paths
            source = ", ".join(str(p) for p in paths) if args.files else "the bundled sample"
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
        emit_json({"source": source, "bytes": n_bytes, "seconds": secs, "n_vocab": tok.n_vocab,
                   "merges": len(tok.merges), "special_tokens": specials,
                   "bytes_per_token": n_bytes / max(n_tokens, 1), "first_merges": first, "output": str(out)})
        return 0
    emit(f"trained on {source} ({n_bytes:,} bytes) in {secs:.2f} s")
    emit(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {len(specials)} special")
    emit(f"bytes per token on the training text: {n_bytes / max(n_tokens, 1):.2f}")
    emit(f"first merges: {', '.join(repr(s) for s in first)}")
    emit(f"wrote {out}")
    return 0


def add_parsers(subparsers: Any) -> None:
    t = add_command(subparsers, "train", cmd_train, "train a tokenizer (default corpus: the bundled English+Korean sample)",
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
    from .grow import add_train_options

    add_train_options(t)
