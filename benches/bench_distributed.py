"""Scale-out throughput: count_chunks and encode_dataset, local engine vs Ray,
against one process, plus the fixed cost per shard.

    PYTHONPATH=python python3 benches/bench_distributed.py --mb 200 --shards 64

Builds ``--mb`` MB of JSONL shards (documents = the blank-line-separated
paragraphs of ``$BYTEPAIR_DATA/corpora/*.txt``, cycled) in a temporary folder,
then times, with ``--workers`` processes / Ray CPUs:

* one process: ``ChunkCounts.from_texts`` and ``Tokenizer.encode_batch`` over all
  documents (reading included);
* ``count_chunks`` and ``encode_dataset`` (o200k_base, ``.bin``) per engine;
* overhead: ``--tiny`` one-line text shards through each engine, seconds per shard.

Ray start-up (``ray.init``) is timed separately and not included in the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def build_shards(folder: Path, mb: float, n_shards: int) -> list:
    data = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    docs = []
    for p in sorted(data.glob("*.txt")):
        docs += [d for d in p.read_text(encoding="utf-8").split("\n\n") if d.strip()]
    target = int(mb * 1e6)
    per_shard = target // n_shards
    folder.mkdir(parents=True, exist_ok=True)
    paths, k, total = [], 0, 0
    for s in range(n_shards):
        path = folder / f"part-{s:05d}.jsonl"
        size = 0
        with open(path, "w", encoding="utf-8") as f:
            while size < per_shard:
                d = docs[k % len(docs)]
                k += 1
                f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
                size += len(d.encode("utf-8"))
        total += size
        paths.append(path)
    return paths, total


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--tiny", type=int, default=100, help="tiny shards for the per-shard overhead")
    ap.add_argument("--engines", default="one,local,ray")
    ap.add_argument("--tasks", default="count,encode")
    ap.add_argument("--keep", default=None, help="folder to keep/reuse the shards in")
    args = ap.parse_args()

    import bytepair
    from bytepair.counts import ChunkCounts
    from bytepair.distributed import count_chunks, encode_dataset, iter_documents

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bytepair-scale-"))
    paths, n_bytes = build_shards(root / "in", args.mb, args.shards)
    tiny = []
    (root / "tiny").mkdir(exist_ok=True)
    for i in range(args.tiny):
        tiny.append(root / "tiny" / f"t{i:05d}.txt")
        tiny[-1].write_text(f"tiny shard {i}\n", encoding="utf-8")
    mb = n_bytes / 1e6
    engines = args.engines.split(",")
    tasks = args.tasks.split(",")
    print(f"{len(paths)} JSONL shards, {mb:.1f} MB of text, {args.workers} workers;"
          f" cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} python={sys.version.split()[0]}")
    tok = bytepair.get_encoding("o200k_base")
    results = {}
    if "ray" in engines:
        import ray

        secs, _ = timed(lambda: ray.init(num_cpus=args.workers, include_dashboard=False,
                                         logging_level="ERROR"))
        print(f"ray {ray.__version__}: ray.init took {secs:.1f} s")
    for eng in engines:
        for task in tasks:
            out = root / f"out-{eng}"
            shutil.rmtree(out, ignore_errors=True)
            if eng == "one":
                def run():
                    docs = (d for p in paths for d in iter_documents(p))
                    if task == "count":
                        return ChunkCounts.from_texts(docs)
                    n = 0
                    batch = []
                    for d in docs:
                        batch.append(d)
                        if len(batch) == 2048:
                            n += sum(map(len, tok.encode_batch(batch, disallowed_special=())))
                            batch = []
                    return n + sum(map(len, tok.encode_batch(batch, disallowed_special=())))
            elif task == "count":
                def run():
                    return count_chunks(paths, engine=eng, workers=args.workers, progress=False)
            else:
                def run():
                    return encode_dataset(paths, out, tokenizer=tok, engine=eng, workers=args.workers,
                                          progress=False)
            secs, res = timed(run)
            results[(eng, task)] = res
            print(f"{task:7s} {eng:6s} {secs:8.2f} s  {mb / secs:7.2f} MB/s", flush=True)
        if eng != "one":
            few = tiny[: max(1, args.tiny // 10)]
            t_few, _ = timed(lambda: count_chunks(few, engine=eng, workers=args.workers, progress=False))
            t_all, _ = timed(lambda: count_chunks(tiny, engine=eng, workers=args.workers, progress=False))
            per = (t_all - t_few) / (len(tiny) - len(few))
            print(f"overhead {eng:6s} {len(few)} tiny shards {t_few:.2f} s, {len(tiny)} tiny shards"
                  f" {t_all:.2f} s: {1000 * per:.1f} ms per extra shard, {t_few - per * len(few):.2f} s"
                  " fixed per call", flush=True)
    counts = [v for (e, t), v in results.items() if t == "count"]
    assert all(c == counts[0] for c in counts), "engines disagree"
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
