"""The open models' tokenizers: encode speed per pattern on one core.

Section ``patterns`` (the pre-tokenizer's share): an ``Encoding`` built from
cl100k_base's ranks with each open model's pattern (``_core.FAST_PATTERNS``:
Llama 3 / GLM-4 / OLMo 2, Qwen2, Qwen3.5, tekken, MiniMax = o200k, Hugging Face
ByteLevel) against cl100k_base itself on the same text, so that only the
pattern differs. The target: no pattern below 0.7x cl100k_base's speed.

Protocol:

* one fresh process per (corpus, pattern, engine, round), pinned with
  ``taskset -c 0``, timed in CPU time (``time.process_time``);
* the corpus (``$BYTEPAIR_DATA/corpora``) cut into five slices of ``--mb`` MB
  (character boundaries); the first is encoded untimed (warm caches), the MB/s
  is the median of slices 2-5 (``encode_to_numpy``: steady, arrays);
* engine ``scanner``: the pattern string as is (it runs on its scanner, checked
  with ``pretokenizer_path``); engine ``regex``: the same regex wrapped in
  ``(?:...)``, which no scanner recognises, so ``fancy-regex`` splits (what
  every such pattern cost before it had a scanner; not for DeepSeek V3's chain
  of three Splits, which is no single regex);
* rounds interleave every cell (``--repeat``); a cell's figure is the median
  over rounds, its ratio the median of the per-round ratios to cl100k_base on
  the same corpus;
* exactness: each child hashes its ids; the scanner's hash must equal the
  regex engine's for the same pattern (``WRONG`` otherwise).

    PYTHONPATH=python python benches/bench_models.py --mb 1 --repeat 3
    PYTHONPATH=python python benches/bench_models.py --patterns llama3 qwen2 --corpora en_austen ko_prose
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
PATTERNS = ["cl100k", "llama3", "qwen2", "qwen35", "nemo", "o200k", "bytelevel", "deepseek_v3"]


def slices(corpus: str, mb: float, n: int = 5) -> list:
    root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    data = (root / f"{corpus}.txt").read_bytes()
    size = min(int(mb * 1e6), len(data) // n)
    out = []
    for k in range(n):
        out.append(data[k * size:(k + 1) * size].decode("utf-8", errors="ignore"))
    return out


def child(corpus: str, pattern_name: str, engine: str, mb: float) -> dict:
    import bytepair
    from bytepair import _core

    base = bytepair.get_encoding("cl100k_base")
    pat = _core.FAST_PATTERNS[pattern_name]
    if engine == "regex":
        pat = f"(?:{pat})"
    enc = bytepair.Encoding(f"bench-{pattern_name}", pat_str=pat, mergeable_ranks=base._mergeable_ranks,
                            special_tokens={})
    parts = slices(corpus, mb)
    digest = hashlib.sha256()
    rates = []
    for k, text in enumerate(parts):
        t0 = time.process_time()
        ids = enc.encode_to_numpy(text)
        dt = time.process_time() - t0
        digest.update(ids.tobytes())
        if k > 0:
            rates.append(len(text.encode()) / 1e6 / dt)
    return {"mbps": statistics.median(rates), "hash": digest.hexdigest()[:16],
            "path": _core.pretokenizer_path(pat)}


def run_child(corpus: str, pattern: str, engine: str, mb: float) -> dict:
    cmd = ["taskset", "-c", "0", sys.executable, __file__, "--child", corpus, pattern, engine, str(mb)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", nargs="*", default=CORPORA)
    ap.add_argument("--patterns", nargs="*", default=PATTERNS)
    ap.add_argument("--mb", type=float, default=1.0, help="MB per slice (five slices per corpus)")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    ap.add_argument("--no-regex", action="store_true", help="skip the fancy-regex engine column")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        corpus, pattern, engine, mb = args.child
        print(json.dumps(child(corpus, pattern, engine, float(mb))))
        return

    import bytepair

    pats = ["cl100k"] + [p for p in args.patterns if p != "cl100k"]
    engines = ["scanner"] if args.no_regex else ["scanner", "regex"]
    print(f"# {' '.join(sys.argv)}")
    print(f"# bytepair {bytepair.__version__}; {platform.machine()} {platform.processor() or ''}; "
          f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; one core (taskset -c 0), CPU time, "
          f"median of slices 2-5 of {args.mb} MB, median of {args.repeat} rounds")
    cells: dict = {}
    for _ in range(args.repeat):
        for corpus in args.corpora:
            for pat in pats:
                for engine in engines:
                    if engine == "regex" and pat in ("cl100k", "deepseek_v3"):
                        continue
                    r = run_child(corpus, pat, engine, args.mb)
                    cells.setdefault((corpus, pat, engine), []).append(r)
    head = f"{'corpus':14} {'pattern':10} {'path':16} {'MB/s':>7} {'x cl100k':>9} {'regex MB/s':>11} {'x regex':>8}"
    print(head)
    print("-" * len(head))
    for corpus in args.corpora:
        base = cells[(corpus, "cl100k", "scanner")]
        for pat in pats:
            runs = cells[(corpus, pat, "scanner")]
            mbps = statistics.median(r["mbps"] for r in runs)
            ratio = statistics.median(r["mbps"] / b["mbps"] for r, b in zip(runs, base))
            line = f"{corpus:14} {pat:10} {runs[0]['path']:16} {mbps:7.1f} {ratio:8.2f}x"
            rx = cells.get((corpus, pat, "regex"))
            if rx:
                rx_mbps = statistics.median(r["mbps"] for r in rx)
                ok = {r["hash"] for r in rx} == {r["hash"] for r in runs}
                line += f" {rx_mbps:11.1f} {mbps / rx_mbps:7.1f}x" + ("" if ok else "  WRONG")
            print(line)


if __name__ == "__main__":
    main()
