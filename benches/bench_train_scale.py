"""Training at corpus scale: bytepair against gigatoken, gigabpe, HF tokenizers
and rustbpe, one fresh process per (peer, corpus, vocab) under ``/usr/bin/time -v``
(wall time and peak RSS), each at the sizes where it finishes within the timeout.

    python benches/train_scale_corpus.py                       # the corpora (Debian packages)
    python benches/bench_train_scale.py [--peers-python PEERS_VENV/bin/python]
        [--sizes 100,300,1200] [--vocabs 32768,131072] [--peers bytepair,gigatoken,gigabpe,hf,rustbpe]
        [--timeout 600] [--pattern gpt2] [--multi] [--large] [--memory 128MB] [--one-thread]

Corpora: ``linux_1g.txt`` (the Linux 6.1 source tree, ~1.2 GB) cut to the first
N MB at a line end (``--sizes``), ``multi_cjk.txt`` (LibreOffice help text in
ten languages plus Thai and Arabic word lists; ``--multi``) and ``large_3g.txt``
(3.4 GB of sources and docs of 14 projects; ``--large``). ``--memory`` adds a
bytepair run with that ``memory_limit``, ``--one-thread`` one with
``num_threads=1``. bytepair runs from this checkout
(``python/`` on ``PYTHONPATH``) with ``--bytepair-python`` (default: this Python);
the peers with ``--peers-python`` (default: this Python; or a separate venv:
``python3 -m venv peers && peers/bin/pip install gigatoken==0.10.0
gigabpe==0.1.0 tokenizers rustbpe==0.1.0``). The peers do not share bytepair's
document rules (HF and gigabpe read lines; gigatoken and rustbpe take the GPT-2
pattern), so merges are compared only between bytepair runs.
Prints one Markdown table row per run.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache/bytepair-data")) / "scale"

# One small program per peer: argv = corpus path, vocab size, pattern[, memory limit].
RUNNERS = {
    "bytepair": """
import sys, pathlib, bytepair
# extra arguments: memory_limit=SIZE, num_threads=N
kw = dict(a.split("=", 1) for a in sys.argv[4:])
if "num_threads" in kw:
    kw["num_threads"] = int(kw["num_threads"])
tok = bytepair.train([pathlib.Path(sys.argv[1])], int(sys.argv[2]), pattern=sys.argv[3], progress=False, **kw)
print("merges", len(tok.merges), "digest", hash(tuple(map(tuple, tok.merges))))
""",
    "gigatoken": """
import sys, gigatoken
vocab, merges = gigatoken.train_bpe(gigatoken.TextFileSource([sys.argv[1]]), int(sys.argv[2]), [])
print("merges", len(merges))
""",
    "gigabpe": """
import sys, gigabpe
vocab, merges = gigabpe.train_bpe([sys.argv[1]], int(sys.argv[2]), pretokenizer="bytelevel")
print("merges", len(merges))
""",
    "hf": """
import sys
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
t = Tokenizer(models.BPE())
t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tr = trainers.BpeTrainer(vocab_size=int(sys.argv[2]), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                         show_progress=False)
t.train([sys.argv[1]], tr)
print("vocab", t.get_vocab_size())
""",
    "rustbpe": """
import sys, rustbpe
def docs(path):
    with open(path, encoding="utf-8") as f:
        para = []
        for line in f:
            para.append(line)
            if line == "\\n":
                yield "".join(para)
                para = []
        if para:
            yield "".join(para)
rb = rustbpe.Tokenizer()
rb.train_from_iterator(docs(sys.argv[1]), int(sys.argv[2]))
print("vocab", len(rb.get_mergeable_ranks()))
""",
}


def prefix(size_mb: int) -> Path:
    """The first ``size_mb`` MB of the Linux corpus, cut after a newline."""
    src = DATA / "linux_1g.txt"
    if size_mb * 10**6 >= src.stat().st_size:
        return src
    out = DATA / f"linux_{size_mb}m.txt"
    if not out.exists():
        with open(src, "rb") as f:
            raw = f.read(size_mb * 10**6)
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(raw[: raw.rfind(b"\n") + 1])
        os.replace(tmp, out)
    return out


def run(python: str, peer: str, corpus: Path, vocab: int, pattern: str, timeout: int, extra: list) -> dict:
    env = dict(os.environ)
    if peer == "bytepair":
        env["PYTHONPATH"] = str(ROOT / "python")
    cmd = ["/usr/bin/time", "-v", python, "-c", RUNNERS[peer], str(corpus), str(vocab), pattern, *extra]
    t0 = time.perf_counter()
    # a session of its own, so a timeout ends the peer too, not only /usr/bin/time
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return {"status": f"> {timeout} s"}
    wall = time.perf_counter() - t0
    r = subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if r.returncode != 0:
        # the exception's line, not /usr/bin/time's report after it
        lines = [ln for ln in r.stderr.splitlines() if "Error" in ln] or r.stderr.strip().splitlines() or [""]
        return {"status": f"failed: {lines[-1][:200]}"}
    return {"status": "ok", "wall": wall, "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
            "out": r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytepair-python", default=sys.executable)
    ap.add_argument("--peers-python", default=sys.executable,
                    help="the Python with the peers installed (default: this one)")
    ap.add_argument("--sizes", default="100,300,1200", help="MB of the Linux corpus")
    ap.add_argument("--vocabs", default="32768,131072")
    ap.add_argument("--peers", default="bytepair,gigatoken,gigabpe,hf,rustbpe")
    ap.add_argument("--multi", action="store_true", help="also the multilingual corpus")
    ap.add_argument("--large", action="store_true", help="also the 3.4 GB corpus (train_scale_corpus.py --large)")
    ap.add_argument("--memory", default=None, help="also bytepair with this memory_limit")
    ap.add_argument("--one-thread", action="store_true", help="also bytepair on one thread (same merges)")
    ap.add_argument("--pattern", default="gpt2")
    ap.add_argument("--timeout", type=int, default=600)
    a = ap.parse_args()
    corpora = [prefix(int(s)) for s in a.sizes.split(",") if s]  # --sizes "": none
    if a.multi:
        corpora.append(DATA / "multi_cjk.txt")
    if a.large:
        corpora.append(DATA / "large_3g.txt")
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    print("| corpus | MB | vocab | peer | wall s | peak RSS MB | result |", flush=True)
    print("|---|---:|---:|---|---:|---:|---|", flush=True)
    too_slow: set = set()
    for vocab in [int(v) for v in a.vocabs.split(",")]:
        for corpus in corpora:
            jobs = [(p, []) for p in a.peers.split(",")]
            if a.memory:
                jobs.append(("bytepair", [f"memory_limit={a.memory}"]))
            if a.one_thread:
                jobs.append(("bytepair", ["num_threads=1"]))
            for peer, extra in jobs:
                if (peer, vocab) in too_slow and corpus.name.startswith("linux"):
                    continue
                python = a.bytepair_python if peer == "bytepair" else a.peers_python
                r = run(python, peer, corpus, vocab, a.pattern, a.timeout, extra)
                if r["status"].startswith(">"):
                    too_slow.add((peer, vocab))
                name = " ".join([peer, *extra])
                mb = corpus.stat().st_size / 1e6
                if r["status"] == "ok":
                    print(f"| {corpus.name} | {mb:,.0f} | {vocab:,} | {name} | {r['wall']:.1f} | {r['rss_mb']:,.0f} "
                          f"| {r['out']} |", flush=True)
                else:
                    print(f"| {corpus.name} | {mb:,.0f} | {vocab:,} | {name} | | | {r['status']} |", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
