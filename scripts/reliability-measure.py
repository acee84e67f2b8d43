#!/usr/bin/env python3
"""Measures one-call encoding of very large hostile inputs: time and peak memory.

Each case runs in a fresh child process so its peak RSS is its own. Prints a
Markdown table (the figures of docs/reliability.md come from this script).

    PYTHONPATH=python python3 scripts/reliability-measure.py --mb 100
    PYTHONPATH=python python3 scripts/reliability-measure.py --mb 8 --cases x spaces

The real-text case reads ``$BYTEPAIR_DATA/corpora`` (default
``~/.cache/bytepair-data``) and repeats it up to the size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from hostile_inputs import CASES as HOSTILE

CASES = {**HOSTILE, "real_text": "real_text(n)"}

CHILD = textwrap.dedent(
    """
    import base64, json, os, random, sys, time
    from pathlib import Path
    import bytepair

    def real_text(n):
        root = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache/bytepair-data")) / "corpora"
        body = "\\n\\n".join(p.read_text(encoding="utf-8") for p in sorted(root.glob("*.txt")))
        return (body * (n // len(body.encode()) + 1))[:n]

    name, n, expr, api = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    enc = bytepair.get_encoding(name)
    enc.encode_ordinary("warm up")
    text = eval(expr, {"n": n, "random": random, "base64": base64, "real_text": real_text})
    size = len(text.encode("utf-8"))
    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    # forget the peak reached while building the text (Linux: writing 5 to
    # clear_refs resets VmHWM), so the peak below is the encode call's own
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = status("VmRSS")
    rss = lambda: status("VmHWM")
    t = time.perf_counter()
    if api == "numpy":
        ids = enc.encode_to_numpy(text)
    else:
        ids = enc.encode_ordinary(text)
    dt = time.perf_counter() - t
    peak = rss()
    n_ids = len(ids)
    ok = enc.decode_bytes(list(ids[:1000])) == text.encode("utf-8")[: len(enc.decode_bytes(list(ids[:1000])))]
    print(json.dumps({"bytes": size, "seconds": dt, "tokens": n_ids, "base_rss": base,
                      "peak_rss": peak, "prefix_ok": ok}))
    """
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--api", choices=["list", "numpy"], default="list")
    ap.add_argument("--cases", nargs="*", default=list(CASES))
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args()
    n = int(args.mb * 1_000_000)
    print("| case | encoding | api | bytes | seconds | MB/s | tokens | peak RSS growth (MiB) | bytes of RSS per input byte |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for case in args.cases:
        try:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, args.encoding, str(n), CASES[case], args.api],
                capture_output=True, text=True, check=False, timeout=args.timeout, env=dict(os.environ),
            )
        except subprocess.TimeoutExpired:
            print(f"| {case} | {args.encoding} | {args.api} | {n} | >{args.timeout:.0f} (timeout) | | | | |")
            continue
        if out.returncode != 0:
            err = out.stderr.strip().splitlines()[-1:] or ["?"]
            print(f"| {case} | {args.encoding} | {args.api} | {n} | error: {err[0][:80]} | | | | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        grew = r["peak_rss"] - r["base_rss"]
        print(
            f"| {case} | {args.encoding} | {args.api} | {r['bytes']:,} | {r['seconds']:.2f} | "
            f"{r['bytes'] / r['seconds'] / 1e6:.1f} | {r['tokens']:,} | {grew / 2**20:.0f} | "
            f"{grew / r['bytes']:.1f} |" + ("" if r["prefix_ok"] else " PREFIX MISMATCH")
        )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
