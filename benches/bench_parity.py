"""Standard BPE against parity-aware BPE at equal vocab size, and what parity costs in training time.

Data: the near-parallel LibreOffice help corpus (en, ko, ja, zh, ru, hi; build it
with ``python benches/parallel_corpus.py``). Line i is the same paragraph in every
language; lines i % 10 in 0..7 train, 8 is the dev set parity training measures,
9 is the test set every number below is measured on. Costs are token counts
(``unit="tokens"``: the texts are translations, so the same content), the Gini
coefficient is over the six languages' test token counts.

``--fixtures`` uses the repository's multilingual fixtures instead (tests/data:
English, Korean, and the Russian / Hindi / Japanese lines of multi_unicode.txt).
They are NOT parallel, so costs are tokens per byte there (``unit="bytes"``).

Timing: CPU seconds of this process (training runs in the Rust core on the
calling process's threads), frequency and parity runs interleaved, median of
``--repeats``; the ratio is parity / frequency on the same data and size.

    python benches/bench_parity.py                      # sizes 2048,4096,8192
    python benches/bench_parity.py --fixtures --sizes 2048,4096
    python benches/bench_parity.py --timing --sizes 8192   # time only, on the full corpora (~40 MB)

``--timing`` trains on the full corpora of ``$BYTEPAIR_DATA/corpora`` split by
language (en: Austen + KJV, ko, code: the Python stdlib, and the ja / zh / ru /
hi lines of multi_unicode.txt; every 10th line held out as the dev set) and
reports only the training times, parity against frequency on the same text.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
from pathlib import Path

import bytepair
from bytepair.inspect import parity
from bytepair.parity import learn_parity

ROOT = Path(__file__).resolve().parents[1]
PARALLEL = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "parallel"
LANGS = ("en", "ko", "ja", "zh", "ru", "hi")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


def parallel_splits():
    if not (PARALLEL / "en.txt").is_file():
        sys.exit(f"no parallel corpus in {PARALLEL}: run python benches/parallel_corpus.py first")
    lines = {g: (PARALLEL / f"{g}.txt").read_text(encoding="utf-8").splitlines() for g in LANGS}
    n = len(lines["en"])
    assert all(len(v) == n for v in lines.values()), "the files are not aligned"
    pick = lambda g, keep: [s for i, s in enumerate(lines[g]) if keep(i % 10)]
    train = {g: pick(g, lambda r: r < 8) for g in LANGS}
    dev = {g: "\n".join(pick(g, lambda r: r == 8)) for g in LANGS}
    test = {g: "\n".join(pick(g, lambda r: r == 9)) for g in LANGS}
    return train, dev, test, "tokens", f"{PARALLEL} ({n:,} aligned paragraphs per language)"


def fixture_splits():
    data = ROOT / "tests" / "data"
    multi = (data / "multi_unicode.txt").read_text(encoding="utf-8")

    def script(lo: int, hi: int) -> list[str]:
        out = []
        for line in multi.splitlines():
            letters = [c for c in line if c.isalpha()]
            if letters and sum(lo <= ord(c) <= hi for c in letters) > 0.5 * len(letters):
                out.append(line)
        return out

    texts = {
        "en": (data / "en_austen.txt").read_text(encoding="utf-8").splitlines(),
        "ko": (data / "ko_prose.txt").read_text(encoding="utf-8").splitlines(),
        "ru": script(0x400, 0x4FF),
        "hi": script(0x900, 0x97F),
        "ja": script(0x3040, 0x30FF),
    }
    pick = lambda g, keep: [s for i, s in enumerate(texts[g]) if keep(i % 10)]
    train = {g: pick(g, lambda r: r < 8) for g in texts}
    dev = {g: "\n".join(pick(g, lambda r: r == 8)) for g in texts}
    test = {g: "\n".join(pick(g, lambda r: r == 9)) for g in texts}
    return train, dev, test, "bytes", "tests/data fixtures (not parallel: en, ko, ru, hi, ja)"


def corpora_splits():
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    read = lambda n: (root / f"{n}.txt").read_text(encoding="utf-8")
    multi = read("multi_unicode").splitlines()

    def script(lo: int, hi: int) -> list[str]:
        out = []
        for line in multi:
            letters = [c for c in line if c.isalpha()]
            if letters and sum(lo <= ord(c) <= hi for c in letters) > 0.5 * len(letters):
                out.append(line)
        return out

    texts = {"en": (read("en_austen") + read("en_kjv")).splitlines(), "ko": read("ko_prose").splitlines(),
             "code": read("code_python").splitlines(), "ja": script(0x3040, 0x30FF), "zh": script(0x4E00, 0x9FFF),
             "ru": script(0x400, 0x4FF), "hi": script(0x900, 0x97F)}
    train = {g: [s for i, s in enumerate(v) if i % 10 != 9] for g, v in texts.items()}
    dev = {g: "\n".join(s for i, s in enumerate(v) if i % 10 == 9) for g, v in texts.items()}
    return train, dev


def timing(sizes: list[int], repeats: int, pattern: str) -> None:
    train, dev = corpora_splits()
    pooled = [s for v in train.values() for s in v]
    total = sum(len(s.encode()) + 1 for s in pooled)
    print(f"bytepair {bytepair.__version__}, {platform.machine()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; {total / 1e6:.1f} MB of training text in {len(train)} languages")
    print()
    print("| vocab | frequency CPU s | parity CPU s | parity / frequency | runs |")
    print("|---:|---:|---:|---:|---:|")
    for size in sizes:
        t = {"f": [], "p": []}
        for _ in range(repeats):
            t0 = cpu()
            bytepair.train(pooled, size, pattern=pattern, progress=False)
            t1 = cpu()
            learn_parity(train, size, dev=dev, pattern=pattern, progress=False)
            t2 = cpu()
            t["f"].append(t1 - t0)
            t["p"].append(t2 - t1)
        f, p = statistics.median(t["f"]), statistics.median(t["p"])
        print(f"| {size:,} | {f:.2f} | {p:.2f} | {p / f:.2f}x | {repeats} |")
    print()
    print(f"load average after: {os.getloadavg()[0]:.2f}; command: python benches/bench_parity.py "
          f"{' '.join(sys.argv[1:])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2048,4096,8192")
    ap.add_argument("--fixtures", action="store_true", help="use tests/data (not parallel) instead")
    ap.add_argument("--repeats", type=int, default=3, help="timing runs per objective (median)")
    ap.add_argument("--pattern", default="o200k")
    ap.add_argument("--timing", action="store_true", help="only time training, on the full corpora")
    ap.add_argument("--hybrid", type=float, default=0.0,
                    help="also train the hybrid variant with this fraction of the merges pooled (e.g. 0.5)")
    args = ap.parse_args()
    if args.timing:
        timing([int(s) for s in args.sizes.split(",")], args.repeats, args.pattern)
        return 0
    train, dev, test, unit, label = fixture_splits() if args.fixtures else parallel_splits()
    langs = list(train)
    pooled = [s for g in langs for s in train[g]]
    print(f"bytepair {bytepair.__version__}, Python {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    print(f"data: {label}; training bytes per language: "
          + ", ".join(f"{g} {sum(len(s.encode()) for s in train[g]):,}" for g in langs))
    print(f"costs on the test split, unit={unit}; pattern {args.pattern}")
    print()
    print("| vocab | objective | Gini | worst language | its tokens/char | all tokens (test) | bytes/token (all) "
          "| merges chosen by | train CPU s (median) | parity / frequency time |")
    print("|---:|---|---:|---|---:|---:|---:|---|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        times: dict[str, list[float]] = {"frequency": [], "parity": []}
        std = par = None
        chosen: list[str] = []
        for _ in range(args.repeats):
            t0 = cpu()
            std = bytepair.train(pooled, size, pattern=args.pattern, progress=False)
            t1 = cpu()
            par, chosen = learn_parity(train, size, dev=dev, pattern=args.pattern, parity_unit=unit, progress=False)
            t2 = cpu()
            times["frequency"].append(t1 - t0)
            times["parity"].append(t2 - t1)
        rows = [("standard", "frequency", std), ("parity", "parity", par)]
        hyb_chosen: list[str] = []
        if args.hybrid:
            g = int(args.hybrid * (size - 256))
            hyb, hyb_chosen = learn_parity(train, size, dev=dev, pattern=args.pattern, parity_unit=unit,
                                           progress=False, global_merges=g)
            rows.append((f"hybrid {args.hybrid:.0%}", f"hybrid ({g:,} pooled)", hyb))
        report = parity({name: tok for name, _, tok in rows}, test, unit=unit)
        n_bytes = sum(len(t.encode()) for t in test.values())
        med = {k: statistics.median(v) for k, v in times.items()}
        for name, obj, _ in rows:
            w = report.worst(name)
            picks = hyb_chosen if name.startswith("hybrid") else chosen
            by = "-" if name == "standard" else ", ".join(f"{g} {picks.count(g):,}" for g in langs)
            ratio = f"{med['parity'] / med['frequency']:.2f}x" if name == "parity" else ""
            secs = f"{med[obj]:.2f}" if obj in med else ""
            print(f"| {size:,} | {obj} | {report.gini(name):.3f} | {w.language} | {w.tokens_per_char:.3f} | "
                  f"{report.total_tokens(name):,} | {n_bytes / report.total_tokens(name):.3f} | {by} | "
                  f"{secs} | {ratio} |")
    print()
    print(f"load average after: {os.getloadavg()[0]:.2f}; command: python benches/bench_parity.py "
          f"{' '.join(sys.argv[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
