"""Pre-tokenization throughput: bytepair's hand-written scanners against the same
patterns run by fancy-regex (tiktoken's engine, inside bytepair's core) and by
the Python ``regex`` module: tiktoken's three patterns and the open models'
(``_core.FAST_PATTERNS``: llama3, qwen2, qwen35, nemo, bytelevel, cl100k_hf, and
DeepSeek V3's chain of ``Split``s, which is no one regex: its scanner alone).

Usage::

    PYTHONPATH=python python benches/bench_pretok.py            # all corpora, 4 MB each
    PYTHONPATH=python python benches/bench_pretok.py --mb 0     # whole corpora
    PYTHONPATH=python python benches/bench_pretok.py --corpora en_austen ko_prose --repeat 5
    PYTHONPATH=python taskset -c 0 python benches/bench_pretok.py --patterns cl100k llama3 qwen2 qwen35 nemo

Columns (MB/s of UTF-8 input, best of ``--repeat`` runs, measured in CPU time of
this process so that a busy machine distorts less; wall-clock figures are
printed with ``--wall``):

* ``scanner``: ``_core.pretokenize_count(pattern, text)``, splitting alone.
* ``scanner+list``: ``_core.pretokenize(name, text)``, also building the Python
  list of str (what a Python caller gets).
* ``fancy-regex``: ``_core.pretokenize_count("(?:PATTERN)", text)``: the same
  regex, not byte-identical to the named pattern, so it runs on fancy-regex.
* ``py-regex``: ``regex.findall`` with the reference's compiled pattern (the
  pattern string itself for the open models' patterns).

Every method's piece count is checked against the scanner's (the Python
``regex`` module's ``\\s`` also takes U+001C-U+001F, so on the open models'
patterns a differing ``py-regex`` count is only marked ``*``). Reads corpora from
``$BYTEPAIR_DATA/corpora`` (default ``~/.cache/bytepair-data/corpora``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bytepair import _core, patterns, reference

NAMES = {"gpt2": patterns.GPT2, "cl100k": patterns.CL100K, "o200k": patterns.O200K}
# DeepSeek V3's chain of Splits, joined by \x1f, is not one regex: its scanner alone, no regex columns
NAMES.update((k, v) for k, v in _core.FAST_PATTERNS.items() if k not in NAMES)
CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]


def load(name: str, mb: float) -> str:
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    data = (root / f"{name}.txt").read_bytes()
    if mb > 0:
        data = data[: int(mb * 1e6)]
    return data.decode("utf-8", errors="ignore")


def best_time(fn, fn_args: tuple, repeat: int, wall: bool) -> tuple:
    clock = time.perf_counter if wall else time.process_time
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        out = fn(*fn_args)
        best = min(best, clock() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", nargs="*", default=CORPORA)
    ap.add_argument("--patterns", nargs="*", default=list(NAMES))
    ap.add_argument("--mb", type=float, default=4.0, help="MB of each corpus (0: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--wall", action="store_true", help="wall clock instead of CPU time")
    args = ap.parse_args()

    import regex

    print(f"regex {regex.__version__}; times: {'wall' if args.wall else 'CPU'}; best of {args.repeat}")
    head = f"{'corpus':14} {'pattern':9} {'MB':>5} {'scanner':>9} {'+list':>9} {'fancy-rx':>9} {'py-regex':>9} {'x fancy':>8} {'x py':>7}"
    print(head)
    print("-" * len(head))
    for corpus in args.corpora:
        text = load(corpus, args.mb)
        mb = len(text.encode()) / 1e6
        for name in args.patterns:
            pat = NAMES[name]
            if not _core.pretokenizer_path(pat).startswith("scanner:"):
                raise SystemExit(f"{name} does not run on a scanner: {_core.pretokenizer_path(pat)}")
            _core.pretokenize_count(pat, "warm up the tables")
            rep = (args.repeat, args.wall)
            t_scan, n = best_time(_core.pretokenize_count, (pat, text), *rep)
            t_list, pieces = best_time(_core.pretokenize, (pat, text), *rep)
            if "\x1f" in pat:  # a chain: no one regex to compare with
                if n != len(pieces):
                    raise SystemExit(f"piece counts differ on {corpus}/{name}: {n} {len(pieces)}")
                print(f"{corpus:14} {name:9} {mb:5.1f} {mb / t_scan:9.1f} {mb / t_list:9.1f} {'-':>9} {'-':>9}")
                continue
            wrapped = f"(?:{pat})"
            tiktoken_pattern = name in ("gpt2", "cl100k", "o200k")
            compiled = reference.compile_pattern(name) if tiktoken_pattern else regex.compile(pat)
            t_fancy, n_fancy = best_time(_core.pretokenize_count, (wrapped, text), *rep)
            t_py, found = best_time(compiled.findall, (text,), *rep)
            if not (n == len(pieces) == n_fancy) or (tiktoken_pattern and n != len(found)):
                raise SystemExit(f"piece counts differ on {corpus}/{name}: {n} {len(pieces)} {n_fancy} {len(found)}")
            mark = " " if n == len(found) else "*"
            rate = [mb / t for t in (t_scan, t_list, t_fancy, t_py)]
            print(
                f"{corpus:14} {name:9} {mb:5.1f} {rate[0]:9.1f} {rate[1]:9.1f} {rate[2]:9.1f} {rate[3]:8.1f}{mark}"
                f" {rate[0] / rate[2]:7.1f}x {rate[0] / rate[3]:6.1f}x"
            )


if __name__ == "__main__":
    main()
