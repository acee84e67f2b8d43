"""The ``bytepair`` command line.

User errors print one line and exit with status 2; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from importlib import resources
from pathlib import Path
from typing import List, Optional


def _sample_path() -> Path:
    return Path(str(resources.files("bytepair").joinpath("data", "sample.txt")))


def cmd_train(args: argparse.Namespace) -> int:
    from . import train

    paths = [Path(p) for p in args.files] or [_sample_path()]
    specials = args.special or ["<|endoftext|>"]
    t0 = time.perf_counter()
    tok = train(paths, args.vocab_size, pattern=None if args.pattern == "none" else args.pattern,
                special_tokens=specials)
    secs = time.perf_counter() - t0
    out = Path(args.output)
    tok.save(out)
    from .train import read_text_file

    text = "".join(read_text_file(p) for p in paths)
    n_bytes = len(text.encode("utf-8"))
    n_tokens = len(tok.encode_ordinary(text))
    print(f"trained on {', '.join(str(p) for p in paths)} ({n_bytes:,} bytes) in {secs:.2f} s")
    print(f"vocab size {tok.n_vocab:,} = 256 bytes + {len(tok.merges):,} merges + {len(specials)} special")
    print(f"bytes per token on the training text: {n_bytes / max(n_tokens, 1):.2f}")
    first = ", ".join(repr(tok.decode_single_token_bytes(256 + k).decode("utf-8", "replace"))
                      for k in range(min(10, len(tok.merges))))
    print(f"first merges: {first}")
    print(f"wrote {out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bytepair", description="Train, run and inspect BPE tokenizers.")
    p.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train a tokenizer (default corpus: the bundled English+Korean sample)")
    t.add_argument("files", nargs="*", help="UTF-8 text files (default: the bundled sample)")
    t.add_argument("--vocab-size", type=int, default=2048)
    t.add_argument("--pattern", default="o200k", help="gpt2 | cl100k | o200k | none | a regex")
    t.add_argument("--special", action="append", help="a special token (repeatable; default <|endoftext|>)")
    t.add_argument("-o", "--output", default="tokenizer.bytepair.json")
    t.set_defaults(func=cmd_train)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError, KeyError, TypeError) as e:
        if args.debug:
            raise
        print(f"bytepair: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
