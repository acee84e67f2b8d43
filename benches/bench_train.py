"""Training benchmark: bytepair against the BPE trainers people use.

Each tool trains in its own subprocess (so peak RSS is per tool) on the same
corpus, vocab size and (where the tool takes one) pre-tokenization pattern, and
is scored on held-out text:

* bytepair (``bytepair.train`` on the corpus file, read in blocks by the core;
  with ``--compare-merges`` also ``bytepair_docs``, trained on the peers' list of
  documents, whose merge list is compared with rustbpe's and bpeasy's),
* Hugging Face ``tokenizers`` (BPE model, ByteLevel BpeTrainer, the pattern as a
  ``Split`` pre-tokenizer),
* rustbpe (``Tokenizer.train_from_iterator``),
* bpeasy (``train_bpe``),
* sentencepiece (``model_type=bpe``, ``byte_fallback``; it has no regex
  pre-tokenizer and treats every line as a sentence).

The corpus is the concatenation of the ``$BYTEPAIR_DATA/corpora/*.txt`` files
(default ``~/.cache/bytepair-data``; 45.2 MB), minus the last 2% of each file
which is kept as held-out text; ``--repeat K`` repeats the training text K times
(the ~200 MB run uses ``--repeat 4 --vocab 32768``); ``--quick`` uses the first
5 MB. Peers other than bytepair get the text as documents split at blank
lines (the corpora separate documents by a blank line); bytepair gets the file.

    python benches/bench_train.py --runs 2             # ~45 MB, vocab 8192, cl100k
    python benches/bench_train.py --repeat 4 --vocab 32768
    python benches/bench_train.py --quick --tools bytepair,rustbpe
    python benches/bench_train.py --compare-merges     # merge lists vs rustbpe/bpeasy

Prints seconds (wall, for training only: reading the corpus into memory is not
timed for the peers; bytepair's time includes reading the file), CPU seconds,
peak RSS during training (the peak is reset after loading the corpus), that peak
minus the RSS after loading the corpus, bytes per token on the held-out text
and the ratio to the fastest peer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# no spinning OpenBLAS thread beside the timed threads (see bench_encode.py)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))

TOOLS = ["bytepair", "hf", "rustbpe", "bpeasy", "sentencepiece"]


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def build_corpus(out: Path, repeat: int, limit: int | None) -> tuple[Path, Path]:
    """Writes train.txt and heldout.txt into ``out``; returns their paths."""
    train_parts, held_parts = [], []
    for f in sorted(data_dir().glob("*.txt")):
        text = f.read_text(encoding="utf-8")
        cut = int(len(text) * 0.98)
        train_parts.append(text[:cut])
        held_parts.append(text[cut:])
    train = "\n\n".join(train_parts)
    if limit:
        train = train[:limit]
    train_path, held_path = out / "train.txt", out / "heldout.txt"
    with open(train_path, "w", encoding="utf-8") as f:
        for _ in range(repeat):
            f.write(train)
            f.write("\n\n")
    held_path.write_text("\n\n".join(held_parts), encoding="utf-8")
    return train_path, held_path


def documents(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n\n")


def rss_mib() -> float:
    """Peak RSS of this process since exec (VmHWM; ru_maxrss would include the
    parent's peak inherited through fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak_rss() -> None:
    """Resets VmHWM (Linux >= 4.0) so the peak covers training, not the transient
    copies made while loading the corpus."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def current_rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# ---------------------------------------------------------------- workers (one tool per process)


def work(tool: str, train_path: Path, held_path: Path, vocab: int, pattern_name: str, threads: int, out: Path) -> None:
    import bytepair

    pattern = bytepair.patterns.resolve(pattern_name)
    held = held_path.read_text(encoding="utf-8")
    docs = None if tool in ("bytepair", "sentencepiece") else documents(train_path)
    reset_peak_rss()
    base_rss = current_rss_mib()
    t0, c0 = time.perf_counter(), time.process_time()
    merges_bytes = None
    if tool in ("bytepair", "bytepair_docs"):
        # bytepair_docs: the same list of documents the peers get (to compare merge lists).
        data = train_path if tool == "bytepair" else docs
        tok = bytepair.train(data, vocab, pattern=pattern, num_threads=threads, progress=False)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        ntok = len(tok.encode_ordinary(held))
        merges_bytes = [tok.decode_single_token_bytes(i).hex() for i in range(256, tok.n_vocab)]
    elif tool == "hf":
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

        hf = Tokenizer(models.BPE())
        hf_pat = pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
        hf.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(hf_pat), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
        hf.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False, min_frequency=0)
        hf.train_from_iterator(docs, trainer=trainer, length=len(docs))
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        ntok = len(hf.encode(held).ids)
    elif tool == "rustbpe":
        import rustbpe

        rb = rustbpe.Tokenizer()
        rb.train_from_iterator(iter(docs), vocab, pattern=pattern)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        ntok = len(rb.encode(held))
        ranks = sorted(rb.get_mergeable_ranks(), key=lambda kv: kv[1])
        merges_bytes = [bytes(t).hex() for t, r in ranks if r >= 256]
    elif tool == "bpeasy":
        import bpeasy

        ranks = bpeasy.train_bpe(iter(docs), pattern, 128, vocab)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        tok = bytepair.Tokenizer(ranks, pattern)
        ntok = len(tok.encode_ordinary(held))
        merges_bytes = [t.hex() for t, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r >= 256]
    elif tool == "sentencepiece":
        import sentencepiece as spm

        prefix = out.with_suffix("")
        spm.SentencePieceTrainer.train(
            input=str(train_path), model_prefix=str(prefix), vocab_size=vocab, model_type="bpe",
            byte_fallback=True, num_threads=threads, character_coverage=0.9995, minloglevel=2,
            max_sentence_length=1 << 16, train_extremely_large_corpus=False, split_digits=True,
            input_sentence_size=0,
        )
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        sp = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
        ntok = len(sp.encode(held))
    else:
        raise SystemExit(f"unknown tool {tool}")
    result = {
        "tool": tool, "seconds": secs, "cpu_seconds": cpu, "peak_rss_mib": rss_mib(),
        "base_rss_mib": base_rss, "bytes_per_token": len(held.encode("utf-8")) / ntok,
    }
    if merges_bytes is not None:
        result["merges"] = merges_bytes
    out.write_text(json.dumps(result))


def versions() -> dict:
    import importlib.metadata as md

    out = {}
    for name in ["bytepair", "tokenizers", "rustbpe", "bpeasy", "sentencepiece"]:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "local" if name == "bytepair" else "missing"
    return out


def compare(merges_a: list[str], merges_b: list[str]) -> int:
    """Length of the common prefix of two merge lists (token bytes)."""
    n = 0
    for x, y in zip(merges_a, merges_b):
        if x != y:
            break
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="first 5 MB only")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--runs", type=int, default=1, help="runs per tool; the fastest is reported")
    ap.add_argument("--compare-merges", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--paths", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        train_path, held_path, out = (Path(p) for p in args.paths)
        work(args.worker, train_path, held_path, args.vocab, args.pattern, args.threads, out)
        return
    tools = args.tools.split(",")
    if args.compare_merges and "bytepair_docs" not in tools:
        tools.append("bytepair_docs")
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        tmpd = Path(tmp)
        train_path, held_path = build_corpus(tmpd, args.repeat, 5_000_000 if args.quick else None)
        size = train_path.stat().st_size
        print(f"corpus: {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB) train, "
              f"{held_path.stat().st_size / 1e6:.2f} MB held-out; vocab {args.vocab}; pattern {args.pattern};"
              f" threads {args.threads}")
        results = []
        for tool in tools:
            best = None
            for _ in range(args.runs):
                out = tmpd / f"{tool}.json"
                cmd = [sys.executable, __file__, "--worker", tool, "--paths", str(train_path), str(held_path),
                       str(out), "--vocab", str(args.vocab), "--pattern", args.pattern, "--threads", str(args.threads)]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if proc.returncode != 0 or not out.exists():
                    print(f"{tool}: FAILED\n{proc.stderr[-2000:]}")
                    break
                r = json.loads(out.read_text())
                out.unlink()
                print(f"  {tool:14s} {r['seconds']:7.2f} s", flush=True)
                if best is None or r["seconds"] < best["seconds"]:
                    best = r
            if best is not None:
                results.append(best)
    peers = [r for r in results if not r["tool"].startswith("bytepair")]
    fastest = min((r["seconds"] for r in peers), default=None)
    print("\n| tool | seconds | CPU s | peak RSS MiB | RSS above corpus MiB | bytes/token | x fastest peer |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        ratio = f"{fastest / r['seconds']:.2f}" if fastest else "-"
        print(f"| {r['tool']} | {r['seconds']:.2f} | {r['cpu_seconds']:.2f} | {r['peak_rss_mib']:.0f} |"
              f" {r['peak_rss_mib'] - r['base_rss_mib']:.0f} | {r['bytes_per_token']:.3f} | {ratio} |")
    print("\nversions:", versions())
    if args.compare_merges:
        ours = next((r["merges"] for r in results if r["tool"] == "bytepair_docs"), None)
        for r in results:
            if not r["tool"].startswith("bytepair") and "merges" in r and ours:
                same = compare(ours, r["merges"])
                common = len(set(ours) & set(r["merges"]))
                print(f"merges vs {r['tool']}: identical prefix {same} of {len(ours)};"
                      f" first difference at merge {same} (ours {bytes.fromhex(ours[same]) if same < len(ours) else None!r},"
                      f" theirs {bytes.fromhex(r['merges'][same]) if same < len(r['merges']) else None!r});"
                      f" same token set size {common}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "versions": versions(), "size": size}, indent=1))


if __name__ == "__main__":
    main()
