"""``bytepair.shrink``: how much held-out text of a domain loses, and how fast.

Corpora (``$BYTEPAIR_DATA/corpora``, default ``~/.cache/bytepair-data/corpora``,
built by ``../shared/data/get-data.sh`` from Debian and PyPI packages; see
``../shared/DATA.md``), documents separated by blank lines:

* Korean: ``ko_prose.txt`` (1.1 M characters: the Korean constitution and
  bills from PyPI ``konlpy``, Debian ``debian-faq-ko``, ``libreoffice-help-ko``);
* English + code: ``en_austen.txt`` (Jane Austen's novels, 4.0 M characters)
  and the first 3 M characters of ``code_python.txt`` (the CPython 3.11
  standard library), 7.0 M characters together.

Every 10th document is held out: shrink never sees it. For each budget and
strategy the held-out text is encoded with the small tokenizer, and its token
count is compared with the full vocabulary's (the ratio is the cost of the
cut), and decoded back (any difference is a round-trip failure). The "naive"
row drops every token the sample never used and keeps the others' ranks (no
merge closure).

Speed: each run is a fresh process that loads o200k_base and shrinks it to
50,000 tokens on about 100 MB of text (every corpus, twice, and
``en_pydocs.txt`` a third time: only 45 MB of distinct text exist, so the
piece caches see repeats) given as file paths, on the threads asked for.

    python benches/bench_shrink.py                  # quality tables + 3 speed runs on 2 threads
    python benches/bench_shrink.py --speed-only --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from bench_encode import machine, table

CORPORA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
STRATEGIES = ("prior", "rank", "count")
D_MODEL = 4096
LAYERS = 32  # non-embedding parameters of a d_model-4096 decoder: 12 d^2 per layer


def documents(name: str, limit: int | None = None) -> list[str]:
    text = (CORPORA / name).read_text(encoding="utf-8")
    if limit is not None:
        text = text[:limit]
    return [d for d in text.split("\n\n") if d.strip()]


def domains() -> dict[str, list[str]]:
    return {
        "Korean": documents("ko_prose.txt"),
        "English + code": documents("en_austen.txt") + documents("code_python.txt", 3_000_000),
    }


def params_saved(n_base: int, n_small: int, tied: bool) -> float:
    """The share of a d_model-4096, 32-layer model's parameters the smaller vocabulary saves."""
    body = 12 * D_MODEL * D_MODEL * LAYERS
    per = 1 if tied else 2
    return (n_base - n_small) * D_MODEL * per / (body + n_base * D_MODEL * per)


def quality(budgets: dict[str, list[int]]) -> None:
    import numpy as np

    import bytepair
    from bytepair.shrinking import shrink, token_use

    base = bytepair.get_encoding("o200k_base")
    for name, docs in domains().items():
        sample = [d for i, d in enumerate(docs) if i % 10 != 9]
        held = [d for i, d in enumerate(docs) if i % 10 == 9]
        t0 = time.perf_counter()
        use = token_use(base, sample)
        t_count = time.perf_counter() - t0
        full = int(token_use(base, held).sum())
        h = token_use(base, held)
        unseen = float(h[use == 0].sum() / h.sum())
        print(f"\n{name}: sample {sum(map(len, sample)):,} chars ({len(sample):,} documents, counted in "
              f"{t_count:.2f} s), held out {sum(map(len, held)):,} chars ({len(held):,} documents), "
              f"{full:,} held-out tokens with o200k_base; the sample uses {int((use > 0).sum()):,} distinct "
              f"tokens; {unseen:.2%} of the held-out tokens are ones the sample never uses")
        rows = []
        for keep in budgets[name]:
            row = [f"{keep:,}"]
            for strategy in STRATEGIES:
                small, _ = shrink(base, counts=use, keep=keep, strategy=strategy)
                n = int(token_use(small, held).sum())
                fails = sum(small.decode(small.encode(d, disallowed_special=())) != d for d in held)
                row.append(f"{n / full:.4f}" + ("" if small.n_vocab == keep else f" (n={small.n_vocab:,})")
                           + (f" {fails} FAILED" if fails else ""))
            row += [f"{params_saved(base.n_vocab, keep, True):.1%}", f"{params_saved(base.n_vocab, keep, False):.1%}"]
            rows.append(row)
        seen = {t: r for t, r in base.mergeable_ranks.items() if len(t) == 1 or use[r]}
        naive = bytepair.Tokenizer(seen, base.pattern, name="naive")
        n = sum(len(naive.encode_ordinary(d)) for d in held)
        fails = sum(naive.decode(naive.encode_ordinary(d)) != d for d in held)
        rows.append([f"naive ({len(seen):,})", f"{n / full:.4f}" + (f" {fails} FAILED" if fails else ""), "", "",
                     f"{params_saved(base.n_vocab, len(seen), True):.1%}",
                     f"{params_saved(base.n_vocab, len(seen), False):.1%}"])
        table(f"{name}: held-out tokens / o200k_base's (lower is better; round-trip failures would be listed)",
              ["keep", *STRATEGIES, f"params saved, tied (d={D_MODEL})", "untied"], rows)
        _ = np


def child_speed(threads: int, keep: int) -> None:
    t0 = time.perf_counter()
    c0 = time.process_time()
    import bytepair
    from bytepair.shrinking import shrink, token_use

    base = bytepair.get_encoding("o200k_base")
    _ = base.merges  # derived from the ranks once per process
    t1 = time.perf_counter()
    names = ["en_austen.txt", "en_kjv.txt", "en_pydocs.txt", "code_python.txt", "ko_prose.txt", "multi_unicode.txt"]
    paths = [CORPORA / n for n in names] * 2 + [CORPORA / "en_pydocs.txt"]
    size = sum(p.stat().st_size for p in paths)
    c1 = time.process_time()
    use = token_use(base, paths, num_threads=threads)
    t2, c2 = time.perf_counter(), time.process_time()
    small, _ = shrink(base, counts=use, keep=keep)
    t3, c3 = time.perf_counter(), time.process_time()
    print(json.dumps({"bytes": size, "tokens": int(use.sum()), "load": t1 - t0, "count": t2 - t1, "choose": t3 - t2,
                      "shrink": t3 - t1, "count_cpu": c2 - c1, "choose_cpu": c3 - c2, "load_cpu": c1 - c0,
                      "n_vocab": small.n_vocab, "load_avg": os.getloadavg()[0]}))


def speed(rounds: int, threads: int, keep: int) -> None:
    runs = []
    for _ in range(rounds):
        out = subprocess.run([sys.executable, __file__, "--child-speed", str(threads), "--keep", str(keep)],
                             capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    rows = [[str(i + 1), f"{r['load_avg']:.1f}", f"{r['bytes'] / 1e6:.1f}", f"{r['tokens']:,}",
             f"{r['load']:.2f} ({r['load_cpu']:.2f})", f"{r['count']:.2f} ({r['count_cpu']:.2f})",
             f"{r['choose']:.2f} ({r['choose_cpu']:.2f})", f"{r['shrink']:.2f}",
             f"{r['count_cpu'] / threads + r['choose_cpu']:.2f}"] for i, r in enumerate(runs)]
    table(f"o200k_base shrunk to {keep:,} on ~100 MB, {threads} threads, fresh process per run: wall seconds "
          "(CPU seconds)", ["run", "load avg", "MB", "tokens", "load o200k_base + merges", "count (encode + bincount)",
                            "choose + build", "shrink wall", f"shrink CPU, count / {threads} + choose"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child-speed", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--keep", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--speed-only", action="store_true")
    args = ap.parse_args()
    if args.child_speed is not None:
        child_speed(args.child_speed, args.keep)
        return
    print(machine())
    if not args.speed_only:
        quality({"Korean": [2_000, 4_000, 8_000, 16_000, 32_000],
                 "English + code": [8_000, 16_000, 32_000, 50_000]})
    speed(args.rounds, args.threads, args.keep)


if __name__ == "__main__":
    main()
