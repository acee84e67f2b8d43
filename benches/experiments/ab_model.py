"""Compare builds of bytepair on an open model's tokenizer file, in fresh processes.

``ab_core.py`` loads several builds of the extension into one process, which
suits the core's calls; a model's pipeline (``bytepair.load(file)``) imports the
whole package, so here each build is a copy of ``python/bytepair`` with its
extension, and every round runs one fresh process per build, alternated (order
reversed on odd rounds), each pinned to one core. A process loads the file,
encodes each corpus's first ``--mb`` MB once to warm the piece cache, then
prints the best of ``--repeat`` ``encode_to_numpy`` calls in MB/s (CPU time);
with ``--fresh`` each call gets a new ``str`` equal to the text (made before
the clock starts), which CPython has not converted to UTF-8 yet.
The corpora are encoded in the order given, in one process: a corpus after
others meets the piece cache they left. A corpus is a name, or a path to any
text file (for example ``help_pages_text.py``'s).

Make the builds with the tree in each state, for example::

    PROFILE=release scripts/dev-build.sh && cp -r python/bytepair /tmp/ab/old/
    # ...change the code...
    PROFILE=release scripts/dev-build.sh && cp -r python/bytepair /tmp/ab/new/
    python benches/experiments/ab_model.py /tmp/ab/old /tmp/ab/new --model deepseek-v3 \\
        --corpora ko_prose multi_unicode --rounds 3

Model files come from ``scripts/get-model-files.py`` and corpora from
``../shared/data/get-data.sh`` (both under ``$BYTEPAIR_DATA``, default
``~/.cache/bytepair-data``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(os.environ.get("BYTEPAIR_DATA") or Path.home() / ".cache" / "bytepair-data")

CHILD = """
import sys, time, bytepair
model, mb, repeat, fresh = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
tok = bytepair.load(model)
rates = []
for path in sys.argv[5:]:
    text = open(path, "rb").read()[: int(mb * 1e6)].decode("utf-8", "ignore")
    tok.encode_to_numpy(text)
    best = float("inf")
    for _ in range(repeat):
        t = text[:1] + text[1:] if fresh else text
        t0 = time.process_time()
        tok.encode_to_numpy(t)
        best = min(best, time.process_time() - t0)
    rates.append(len(text.encode()) / best / 1e6)
print(" ".join(f"{r:.0f}" for r in rates))
"""


def corpus_path(c: str) -> str:
    """A corpus by name (under ``$BYTEPAIR_DATA/corpora``), or a text file by path."""
    return c if "/" in c else str(DATA / "corpora" / f"{c}.txt")


def run(build: str, model: Path, corpora: list, mb: float, repeat: int, cpu: int, fresh: bool = False) -> list:
    """One fresh process of ``build``: MB/s per corpus."""
    env = dict(os.environ, PYTHONPATH=build)
    cmd = ["taskset", "-c", str(cpu), sys.executable, "-c", CHILD, str(model), str(mb), str(repeat), str(int(fresh))]
    out = subprocess.run(cmd + [corpus_path(c) for c in corpora],
                         env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", help="folders holding a copy of python/bytepair with its extension")
    ap.add_argument("--model", required=True, help="a folder name under $BYTEPAIR_DATA/models")
    ap.add_argument("--file", default="tokenizer.json")
    ap.add_argument("--corpora", nargs="+", default=["en_kjv", "code_python", "ko_prose", "multi_unicode"])
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="each timed call on a new str equal to the text")
    args = ap.parse_args()
    model = DATA / "models" / args.model / args.file
    print(f"# {' '.join(sys.argv)}")
    kind = "a new str each call" if args.fresh else "the same str"
    print(f"# {args.model}: encode_to_numpy MB/s, best of {args.repeat} ({kind}), one fresh process per build and round")
    print(f"{'round':6} {'build':30} " + " ".join(f"{c:>14}" for c in args.corpora))
    for r in range(args.rounds):
        order = args.builds if r % 2 == 0 else args.builds[::-1]
        for build in order:
            rates = run(build, model, args.corpora, args.mb, args.repeat, args.cpu, args.fresh)
            print(f"{r + 1:<6} {build:30} " + " ".join(f"{x:14.0f}" for x in rates), flush=True)


if __name__ == "__main__":
    main()
