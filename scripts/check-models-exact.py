"""Compare bytepair with Hugging Face ``tokenizers`` on every document of the
six corpora, for every cached ``tokenizer.json`` (or the models named).

    python scripts/check-models-exact.py                  # every model file cached
    python scripts/check-models-exact.py gpt-neox-20b olmo-1

Needs the corpora (``../shared/data/get-data.sh``) and the model files
(``python scripts/get-model-files.py``) under ``$BYTEPAIR_DATA`` (default
``~/.cache/bytepair-data``). A document is a stretch between blank lines.
Prints, per model, how many documents differ without special tokens (all of
them) and with ``add_special_tokens=True`` (the first ``--with-specials``);
exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import tokenizers

import bytepair

CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]


def documents(root: Path) -> list:
    docs: list = []
    for name in CORPORA:
        text = (root / "corpora" / f"{name}.txt").read_text(encoding="utf-8")
        docs += [d for d in text.split("\n\n") if d]
    return docs


def differing(got: list, want: list) -> int:
    return sum(1 for a, b in zip(got, want) if list(a) != list(b))


def check(path: Path, docs: list, with_specials: int) -> tuple:
    ours, theirs = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    want = [e.ids for e in theirs.encode_batch(docs, add_special_tokens=False)]
    plain = differing(ours.encode_batch(docs), want)
    head = docs[:with_specials]
    want = [e.ids for e in theirs.encode_batch(head, add_special_tokens=True)]
    special = differing([ours.encode(d, add_special_tokens=True) for d in head], want)
    return plain, special


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", help="model folders under models/ (default: every one with a tokenizer.json)")
    ap.add_argument("--with-specials", type=int, default=3000, metavar="N",
                    help="documents checked with add_special_tokens=True (default 3000)")
    args = ap.parse_args()
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data"))
    models = args.models or sorted(p.parent.name for p in (root / "models").glob("*/tokenizer.json"))
    docs = documents(root)
    bad = 0
    for m in models:
        t0 = time.perf_counter()
        plain, special = check(root / "models" / m / "tokenizer.json", docs, args.with_specials)
        bad += plain + special
        print(f"{m}: {plain} of {len(docs)} documents differ; with special tokens {special} of "
              f"{min(len(docs), args.with_specials)}; {time.perf_counter() - t0:.0f} s", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
