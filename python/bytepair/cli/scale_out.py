"""The scale-out commands (:mod:`bytepair.distributed`):

* ``bytepair count-chunks SHARDS... -o counts.bpc [--engine ray] [--memory 2GB]``:
  the chunk table for ``bytepair train --counts counts.bpc``;
* ``bytepair encode-dataset SHARDS... -o OUT_DIR (-e NAME | -t FILE)
  [--engine ray] [--format bin|npy|parquet]``.

>>> import argparse
>>> p = argparse.ArgumentParser(prog="bytepair")
>>> add_parsers(p.add_subparsers(dest="command"))
>>> p.parse_args(["count-chunks", "a.txt", "-o", "c.bpc"]).engine
'local'
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from .. import patterns
from ..distributed import count_chunks, encode_dataset
from ..outputs import check_outputs
from ..registry import list_encoding_names
from ..shards.readers import shard_format
from .common import UsageError, check_encoding_name, check_file_options, load_tokenizer, nonnegative_int, positive_int


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=["local", "ray"],
        default="local",
        help="local: a process pool on this machine (default); ray: Ray tasks",
    )
    p.add_argument(
        "--workers",
        type=positive_int("--workers"),
        default=None,
        help="local worker processes (default: CPUs); with --engine ray,"
        " CPUs of a Ray started here",
    )
    p.add_argument(
        "--address",
        default=None,
        help="Ray cluster address (default: $RAY_ADDRESS, else a local Ray)",
    )
    p.add_argument("--max-retries", type=nonnegative_int("--max-retries"), default=3,
                   help="reruns of a task whose worker died (default 3; 0: none)")
    p.add_argument("--text-column", default=None, help="JSONL key / Parquet column with the text (default: text)")
    p.add_argument(
        "--input-format",
        choices=["text", "jsonl", "parquet"],
        default=None,
        help="force the input format (default: from each file name)",
    )
    p.add_argument(
        "--no-progress", dest="progress", action="store_false", default=None, help="no progress line"
    )


def _check_engine_args(args: argparse.Namespace) -> None:
    """Refuses options that none of the run's engine or shards would use."""
    if args.address is not None and args.engine != "ray":
        raise UsageError("--address is a Ray cluster's address; it goes with --engine ray")
    if args.text_column is not None:
        formats = {args.input_format or shard_format(s) for s in args.shards}
        if formats == {"text"}:
            raise UsageError("--text-column names the text of JSONL or Parquet shards; these shards are plain text "
                             "(one document per file): drop it, or give --input-format jsonl/parquet")
    else:
        args.text_column = "text"


def cmd_count_chunks(args: argparse.Namespace) -> int:
    _check_engine_args(args)
    check_outputs([("-o", args.output)], [("the shard", s) for s in args.shards])
    pattern = None if args.pattern == "none" else args.pattern
    specials = args.special if args.special is not None else ["<|endoftext|>"]
    t0 = time.perf_counter()
    counts = count_chunks(
        args.shards,
        pattern=pattern,
        special_tokens=specials,
        text_column=args.text_column,
        input_format=args.input_format,
        engine=args.engine,
        workers=args.workers,
        address=args.address,
        max_retries=args.max_retries,
        progress=args.progress,
        memory_limit=args.memory,
    )
    secs = time.perf_counter() - t0
    counts.save(args.output)
    print(
        f"counted {_plural(len(args.shards), 'shard')} in {secs:.2f} s ({args.engine} engine):"
        f" {len(counts):,} distinct chunks, {counts.total():,} in all"
    )
    if counts.pattern == patterns.SUPERWORD:
        print(f"wrote {args.output}; train with: bytepair train --counts WORDS.bpc --span-counts {args.output} "
              "--superword T --vocab-size N")
    else:
        print(f"wrote {args.output}; train with: bytepair train --counts {args.output} --vocab-size N")
    return 0


def cmd_encode_dataset(args: argparse.Namespace) -> int:
    _check_engine_args(args)
    check_file_options(args, [("t", args.tokenizer_file)] if args.tokenizer_file else [("e", args.encoding)])
    tok: Any = args.encoding if args.tokenizer_file is not None else check_encoding_name(args.encoding)
    if args.tokenizer_file is not None:
        tok = load_tokenizer("t", args.tokenizer_file, args)[1]
    allowed: Any = "all" if args.allow_special else ()
    t0 = time.perf_counter()
    m = encode_dataset(
        args.shards,
        args.output,
        tokenizer=tok,
        engine=args.engine,
        format=args.format,
        append_eot=not args.no_eot,
        text_column=args.text_column,
        input_format=args.input_format,
        allowed_special=allowed,
        workers=args.workers,
        address=args.address,
        max_retries=args.max_retries,
        progress=args.progress,
    )
    secs = time.perf_counter() - t0
    print(
        f"{_plural(len(m['shards']), 'shard')} in {args.output}: {_plural(m['documents'], 'document')},"
        f" {_plural(m['tokens'], 'token')} ({m['dtype']}, {m['output_format']}) in {secs:.2f} s"
    )
    return 0


def add_parsers(subparsers: Any) -> None:
    """Adds ``count-chunks`` and ``encode-dataset`` to a subparsers object."""
    c = subparsers.add_parser(
        "count-chunks",
        help="count pre-token chunks of many shards in parallel (for train --counts)",
        description="Count the pre-token chunks of text/JSONL/Parquet shards in parallel; the table"
        " equals counting the shards one after the other on one machine.",
    )
    c.add_argument("shards", nargs="+", help="input shards, in corpus order")
    c.add_argument("-o", "--output", required=True, help="chunk-count file to write (.bpc)")
    c.add_argument("--pattern", default="o200k", help="gpt2 | cl100k | o200k | none | a regex")
    c.add_argument(
        "--special",
        action="append",
        help="special-token text cut out before counting (repeatable; default <|endoftext|>)",
    )
    c.add_argument("--memory", metavar="SIZE", default=None,
                   help="memory limit of each task's counting, e.g. 2GB or 512MiB (default: none); a task "
                        "spills to disk past it with identical counts")
    _engine_args(c)
    c.set_defaults(func=cmd_count_chunks)

    e = subparsers.add_parser(
        "encode-dataset",
        help="encode shards into token files (one per shard) plus manifest.json",
        description="Encode text/JSONL/Parquet shards into one token file each; resumable.",
    )
    e.add_argument("shards", nargs="+", help="input shards")
    e.add_argument("-o", "--output", required=True, help="output directory")
    which = e.add_mutually_exclusive_group(required=True)
    which.add_argument("-e", "--encoding", help=f"a bundled encoding: {', '.join(list_encoding_names())}")
    which.add_argument("-t", "--tokenizer", dest="tokenizer_file", help="a tokenizer file")
    e.add_argument("--preset", metavar="NAME", choices=list_encoding_names(),
                   help="for a -t .tiktoken file: take pattern and special tokens from this bundled encoding")
    e.add_argument("--pattern", metavar="PATTERN",
                   help="for a -t .tiktoken or GPT-2 file: its pre-tokenization (gpt2 | cl100k | o200k | none | a regex)")
    e.add_argument(
        "--format",
        choices=["bin", "npy", "parquet"],
        default="bin",
        help="bin: raw little-endian ids (default); npy; parquet: one row per document",
    )
    e.add_argument(
        "--no-eot", action="store_true", help="do not append <|endoftext|> after each document"
    )
    e.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text in documents as special tokens (default: as plain text)",
    )
    _engine_args(e)
    e.set_defaults(func=cmd_encode_dataset)
