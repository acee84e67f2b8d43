"""What extending a tokenizer with Korean merges buys on Korean and costs on English.

For each base (gpt2, o200k_base by default): extend it once with the largest
number of merges on the Korean training documents, truncate that to the smaller
sizes (a prefix of the new merges is exactly a shorter extension), and count
tokens per character on held-out Korean documents (every 10th document of the
corpus, never trained on) and on English text (Jane Austen). Also times the
extension (CPU seconds of this process; the work runs in the Rust core).

    python benches/bench_extend.py                       # +1k, +4k, +16k; gpt2 and o200k_base
    python benches/bench_extend.py --adds 1000,4000 --bases o200k_base

Corpora: $BYTEPAIR_DATA/corpora/{ko_prose,en_austen}.txt (see ../shared/DATA.md),
falling back to tests/data when missing. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
from pathlib import Path

import bytepair

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def corpus(name: str) -> tuple[str, str]:
    p = DATA / f"{name}.txt"
    if not p.is_file():
        p = ROOT / "tests" / "data" / f"{name}.txt"
    return p.read_text(encoding="utf-8"), str(p)


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def english(ids: list, base_ids: list) -> str:
    if ids == base_ids:
        return "same ids"
    return f"{len(ids) - len(base_ids):+,} ({(len(ids) - len(base_ids)) / len(base_ids):+.2%})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--adds", default="1000,4000,16000")
    ap.add_argument("--bases", default="gpt2,o200k_base")
    ap.add_argument("--english-bytes", type=int, default=1_000_000)
    args = ap.parse_args()
    adds = sorted(int(x) for x in args.adds.split(","))
    ko, ko_path = corpus("ko_prose")
    en, en_path = corpus("en_austen")
    docs = [d for d in ko.split("\n\n") if d.strip()]
    train = [d for i, d in enumerate(docs) if i % 10 != 9]
    held = "\n\n".join(d for i, d in enumerate(docs) if i % 10 == 9)
    en = en[: args.english_bytes]
    print(f"bytepair {bytepair.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"Korean: {ko_path}: {len(train):,} training documents ({sum(len(d.encode()) for d in train):,} bytes), "
          f"{len(docs) - len(train):,} held out ({len(held):,} chars); English: {en_path}, first {len(en):,} chars")
    print()
    print("| base | merges added | n_vocab | Korean held-out tokens/char | vs base | English tokens/char | "
          "English tokens vs base | extend CPU s |")
    print("|---|---:|---:|---:|---:|---:|---|---:|")
    for name in args.bases.split(","):
        base = bytepair.get_encoding(name)
        ko0, en0 = base.encode_ordinary(held), base.encode_ordinary(en)
        print(f"| {name} | 0 | {base.n_vocab:,} | {len(ko0) / len(held):.3f} | 1.00x | {len(en0) / len(en):.4f} | "
              f"- | - |")
        t0 = cpu()
        big = bytepair.extend(base, train, add=adds[-1], progress=False)
        secs = cpu() - t0
        for add in adds:
            tok = big if add == adds[-1] else big.truncate(base.n_vocab + add)[0]
            k, e = tok.encode_ordinary(held), tok.encode_ordinary(en)
            print(f"| {name} | +{add:,} | {tok.n_vocab:,} | {len(k) / len(held):.3f} | "
                  f"{len(k) / len(ko0):.2f}x | {len(e) / len(en):.4f} | {english(e, en0)} | "
                  f"{secs if add == adds[-1] else float('nan'):.1f} |".replace("| nan |", "| |"))
    print()
    print(f"load average after: {os.getloadavg()[0]:.2f}; command: python benches/bench_extend.py {' '.join(sys.argv[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
