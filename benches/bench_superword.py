"""Superword tokenizers: compression, training cost and encoding speed.

Corpora: ``$BYTEPAIR_DATA/corpora`` (default ``~/.cache/bytepair-data``).
Every 20th document (documents are separated by a blank line) is held out;
training sees the rest. "English" is en_austen + en_kjv + en_pydocs
concatenated (the largest English text the registries give here, ~19 MB);
"multilingual" is multi_unicode, whose held-out documents are sorted by
script (kana with Han: ja, Han: zh, Cyrillic: ru, Devanagari: hi, Hangul: ko,
Latin: en; "mixed" when none has 60% of the letters).

    python benches/bench_superword.py compression [--vocab 32768,65536,131072] [--transitions 0.8,0.9,0.95]
    python benches/bench_superword.py train [--vocab 65536] [--threads 2] [--copies N] [--memory default,1GB]
    python benches/bench_superword.py encode [--vocab 65536]
    python benches/bench_superword.py stages [--vocab 65536] [--threads 2] [--copies N]

``compression``: held-out tokens of plain BPE and of the superword tokenizer
of the same size trained on the same text, per corpus / language (negative:
fewer tokens). When the training text supports fewer merges than the size
asks, plain BPE stops early (the size it reached is shown) and so does stage
1, leaving the rest to stage 2: compare only rows where plain BPE reached the
size. ``train``: seconds (wall and CPU) and peak RSS of plain and superword
training, each in a fresh process, with a digest of the merges (``--memory``:
one superword row per memory limit, each digest compared with the first
row's). ``--copies N`` trains on N copies of the
English text instead, every copy after the first with one word in ten
replaced by a word drawn from the text (seeded), so that its lines are new
lines, as in a larger corpus, while the phrases stay English (a synthetic
stand-in: the registries hold no larger English text). ``stages``: one
superword training at t = 90% (with ``--copies``, on the varied copies), in a
fresh process, its stages run one by one as ``bytepair.superword`` runs
them: wall and CPU seconds of each, and the peak RSS so far. ``encode``: MB/s of bytepair and of
Hugging Face ``tokenizers`` (one thread each, ``RAYON_NUM_THREADS=1``) on the
exported ``tokenizer.json``, per corpus, batches of documents, ids checked
equal. The machine, versions and command are printed first.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

import bytepair

CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
ENGLISH = ["en_austen", "en_kjv", "en_pydocs"]


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def split(name: str) -> tuple[list[str], list[str]]:
    docs = (data_dir() / f"{name}.txt").read_text(encoding="utf-8").split("\n\n")
    return [d for i, d in enumerate(docs) if i % 20], [d for i, d in enumerate(docs) if not i % 20]


def script(doc: str) -> str:
    """The script most of a document's letters are in (kana and Han together
    count as ja when the document has kana); "mixed" below 60%."""
    c: collections.Counter = collections.Counter()
    for ch in doc:
        o = ord(ch)
        c["kana" if 0x3040 <= o <= 0x30FF else "zh" if 0x4E00 <= o <= 0x9FFF else
          "ru" if 0x0400 <= o <= 0x04FF else "hi" if 0x0900 <= o <= 0x097F else
          "ko" if 0xAC00 <= o <= 0xD7A3 else "en" if ch.isascii() and ch.isalpha() else ""] += 1
    del c[""]
    if c["kana"]:
        c["ja"] = c.pop("kana") + c.pop("zh", 0)
    total = sum(c.values())
    top = c.most_common(1)
    return top[0][0] if top and top[0][1] >= 0.6 * total else "mixed"


def training_file(names: list[str], tmp: Path) -> tuple[Path, dict[str, list[str]]]:
    """The training text of ``names`` as one file, and the held-out documents by group."""
    path = tmp / ("_".join(names) + ".train.txt")
    held: dict[str, list[str]] = collections.defaultdict(list)
    parts = []
    for n in names:
        train, out = split(n)
        parts.append("\n\n".join(train))
        if n == "multi_unicode":
            for d in out:
                held[f"multi:{script(d)}"].append(d)
        else:
            held[n] = out
    if not path.exists():
        path.write_text("\n\n".join(parts), encoding="utf-8")
    return path, held


def varied_copies(path: Path, copies: int, tmp: Path) -> Path:
    """``copies`` copies of ``path``; in each copy after the first, every word
    is replaced with probability 0.1 by a word drawn from the text (seed 49)."""
    out = tmp / f"{path.stem}.x{copies}.txt"
    if out.exists():
        return out
    import random

    text = path.read_text(encoding="utf-8")
    words = text.split(" ")
    rng = random.Random(49)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
        for _ in range(copies - 1):
            f.write("\n\n")
            f.write(" ".join(w if rng.random() >= 0.1 or "\n" in w else rng.choice(words).strip() or w
                             for w in words))
    return out


def quiet_train(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train(*args, progress=False, **kw)


def held_tokens(tok, docs: list[str]) -> int:
    return sum(len(ids) for ids in tok.encode_ordinary_batch(docs))


def cmd_compression(args, tmp: Path) -> None:
    sizes = [int(v) for v in args.vocab.split(",")]
    trans = [float(t) for t in args.transitions.split(",")]
    print("| training text | held out | vocab (plain reached) | plain tokens | "
          + " | ".join(f"t = {t:.0%}" for t in trans) + " |")
    print("|---" * (4 + len(trans)) + "|")
    for names in (ENGLISH, ["code_python"], ["ko_prose"], ["multi_unicode"]):
        path, held = training_file(names, tmp)
        for v in sizes:
            plain = quiet_train(path, v)
            sw = {t: quiet_train(path, v, superword=t) for t in trans}
            for group, docs in held.items():
                base = held_tokens(plain, docs)
                cells = [f"{(held_tokens(sw[t], docs) - base) / base:+.1%}" for t in trans]
                print(f"| {'+'.join(names)} | {group} ({len(docs)} docs) | {v:,} ({plain.n_vocab:,}) | {base:,} | "
                      + " | ".join(cells) + " |", flush=True)


def _child_train(path: str, vocab: int, transition: float, threads: int, memory: str = "") -> None:
    import hashlib

    t0 = time.perf_counter()
    kw: dict = {} if transition <= 0 else {"superword": transition}
    if memory:
        kw["memory_limit"] = memory
    tok = quiet_train(Path(path), vocab, num_threads=threads, **kw)
    secs = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    digest = hashlib.sha256(repr(tok.merges).encode()).hexdigest()[:12]
    print(json.dumps({"seconds": secs, "cpu": use.ru_utime + use.ru_stime, "peak_rss": use.ru_maxrss * 1024,
                      "n_vocab": tok.n_vocab, "merges": digest}))


def cmd_train(args, tmp: Path) -> None:
    path, _ = training_file(ENGLISH, tmp)
    if args.copies > 1:
        path = varied_copies(path, args.copies, tmp)
    size = path.stat().st_size
    print(f"training text: {path.name}, {size / 1e6:.1f} MB, vocab {args.vocab:,}, {args.threads} threads; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| trainer | memory_limit | seconds | CPU seconds | MB/s | peak RSS (MB) | merges |")
    print("|---|---|---|---|---|---|---|")
    limits = [m if m != "default" else "" for m in args.memory.split(",")]
    seen: dict = {}
    for transition in [0.0] + [float(t) for t in args.transitions.split(",")]:
        for memory in limits if transition > 0 else [""]:
            env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
            out = subprocess.run([sys.executable, __file__, "_child_train", str(path), str(args.vocab),
                                  str(transition), str(args.threads), memory],
                                 capture_output=True, text=True, env=env, check=False)
            label = "plain BPE" if transition <= 0 else f"superword t = {transition:.0%}"
            if out.returncode != 0:
                why = (out.stderr.strip().splitlines() or ["no message"])[-1]
                print(f"| {label} | {memory or 'default'} | refused: {why} | | | | |", flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            same = seen.setdefault(transition, r["merges"]) == r["merges"]
            print(f"| {label} | {memory or 'default'} | {r['seconds']:.1f} | {r['cpu']:.1f} "
                  f"| {size / 1e6 / r['seconds']:.1f} | {r['peak_rss'] / 1e6:,.0f} "
                  f"| {r['merges']}{'' if same else ' (DIFFERENT)'} |", flush=True)


def _child_stages(path: str, vocab: int, threads: int) -> None:
    from bytepair import _core, patterns
    from bytepair.counts import count_chunks
    from bytepair.superword import DEFAULT_MAX_WORDS, transition_size

    def stage(name, f):
        w0, c0 = time.perf_counter(), _cpu()
        out = f()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"| {name} | {time.perf_counter() - w0:.1f} | {_cpu() - c0:.1f} | {peak / 1e6:,.0f} |", flush=True)
        return out

    w0, c0 = time.perf_counter(), _cpu()
    words = stage("stage 1: counting words", lambda: count_chunks(Path(path), num_threads=threads))
    t = transition_size(0.9, vocab)
    base = stage("stage 1: merges", lambda: quiet_train(counts=words, vocab_size=t, num_threads=threads))
    spans = stage("stage 2: counting spans", lambda: count_chunks(Path(path), pattern=patterns.SUPERWORD,
                                                                  num_threads=threads))
    first = 256 + len(base.merges)
    stage("stage 2: encoding the spans, pair state, merges", lambda: _core.extend_merges(
        base._core, spans.table, first, vocab - first, 1, None, None, max_words=DEFAULT_MAX_WORDS,
        num_threads=threads))
    print(f"| all | {time.perf_counter() - w0:.1f} | {_cpu() - c0:.1f} | |")
    print(f"{len(spans.table):,} distinct spans, {spans.table.arena_len / 1e6:,.0f} MB")


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def cmd_stages(args, tmp: Path) -> None:
    path, _ = training_file(ENGLISH, tmp)
    if args.copies > 1:
        path = varied_copies(path, args.copies, tmp)
    print(f"training text: {path.name}, {path.stat().st_size / 1e6:.1f} MB, vocab {args.vocab:,}, t = 90%, "
          f"{args.threads} threads; load average {os.getloadavg()[0]:.1f}")
    print("| stage | seconds | CPU seconds | peak RSS so far (MB) |")
    print("|---|---|---|---|", flush=True)
    env = dict(os.environ, RAYON_NUM_THREADS=str(args.threads))
    subprocess.run([sys.executable, __file__, "_child_stages", str(path), str(args.vocab), str(args.threads)],
                   env=env, check=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def cmd_encode(args, tmp: Path) -> None:
    from tokenizers import Tokenizer as HF

    path, _ = training_file(ENGLISH, tmp)
    tok = quiet_train(path, args.vocab, superword=0.9)
    exported = tmp / "superword.tokenizer.json"
    bytepair.formats.hf_json.save(tok, exported, merges="minimal")
    hf = HF.from_file(str(exported))
    print(f"superword tokenizer {args.vocab:,} (t = 90%) trained on English; one thread each")
    print("| corpus | MB | bytepair MB/s | HF tokenizers MB/s | ratio |")
    print("|---|---|---|---|---|")
    for name in CORPORA:
        docs = (data_dir() / f"{name}.txt").read_text(encoding="utf-8").split("\n\n")
        mb = sum(len(d.encode("utf-8")) for d in docs) / 1e6
        ours = theirs = float("inf")
        for _ in range(args.runs):
            t0 = time.perf_counter()
            a = tok.encode_ordinary_batch(docs, num_threads=1)
            t1 = time.perf_counter()
            b = hf.encode_batch(docs, add_special_tokens=False)
            t2 = time.perf_counter()
            ours, theirs = min(ours, t1 - t0), min(theirs, t2 - t1)
        assert a == [e.ids for e in b], name
        print(f"| {name} | {mb:.1f} | {mb / ours:.1f} | {mb / theirs:.1f} | {theirs / ours:.1f}x |", flush=True)


def main() -> None:
    if sys.argv[1:2] == ["_child_train"]:
        _child_train(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), *sys.argv[6:7])
        return
    if sys.argv[1:2] == ["_child_stages"]:
        _child_stages(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["compression", "train", "encode", "stages"])
    p.add_argument("--vocab", default="65536")
    p.add_argument("--transitions", default="0.8,0.9,0.95")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--memory", default="default",
                   help="train: memory limits of the superword rows, e.g. default,1GB (merges compared)")
    p.add_argument("--copies", type=int, default=1, help="train, stages: varied copies of the English text (see above)")
    args = p.parse_args()
    import tokenizers

    print(f"$ python benches/{Path(__file__).name} {' '.join(sys.argv[1:])}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}; python {platform.python_version()}"
          f", bytepair {bytepair.__version__}, tokenizers {tokenizers.__version__}")
    tmp = Path(os.environ.get("TMPDIR", "/tmp")) / "bytepair-bench-superword"
    tmp.mkdir(exist_ok=True)
    if args.what == "train":
        args.vocab = int(args.vocab)
        cmd_train(args, tmp)
    elif args.what == "stages":
        args.vocab = int(args.vocab)
        cmd_stages(args, tmp)
    elif args.what == "encode":
        args.vocab = int(args.vocab)
        cmd_encode(args, tmp)
    else:
        cmd_compression(args, tmp)


if __name__ == "__main__":
    main()
