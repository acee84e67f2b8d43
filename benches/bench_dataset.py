"""Dataset encoding: shards on disk to token ids, bytepair against gigatoken.

    PYTHONPATH=python python3 benches/bench_dataset.py --mb 30 --shards 16

Builds ``--mb`` MB of text as ``--shards`` JSONL shards and the same documents
as Parquet shards (documents: the blank-line-separated paragraphs of
``$BYTEPAIR_DATA/corpora/*.txt``, shuffled with a fixed seed, so every shard
mixes English, code, Korean and many scripts), then times, each in a **fresh
process** (``--repeats`` processes per cell, the best kept):

* ``gigatoken files``: gigatoken 0.10.0 ``Tokenizer.encode_files(JsonlFileSource
  / ParquetFileSource(paths))`` (in memory, nothing written);
* ``bytepair files``: ``Tokenizer.encode_files(paths)`` (in memory);
* ``bytepair dataset``: ``encode_dataset(paths, out, format="bin")`` (files
  written, fsynced, manifest);
* ``bytepair batch``: the Python readers (``iter_documents``) then
  ``encode_batch_to_numpy`` of all documents;
* ``bytepair encode only``: ``encode_batch_to_numpy`` of the documents read
  beforehand (untimed): what the encoder alone costs, the floor of the others.

Columns: ``first`` is the first call of the new process (tokenizer already
loaded; its load time is printed apart), ``second`` the same call again in the
same process. MB/s of text (UTF-8 bytes of the documents). "1 core" runs
under ``taskset -c 0`` (``--pin`` another CPU) with ``RAYON_NUM_THREADS=1``
and one thread asked of every peer; "all" leaves every core to every peer. ``peak MB`` is the peak
resident memory of the process minus its resident memory after loading the
tokenizer. Every peer's ids are checked equal (hash of the flat ids).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# no spinning OpenBLAS thread beside the timed threads (see bench_encode.py)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

PEERS = ["gigatoken files", "bytepair files", "bytepair dataset", "bytepair batch", "bytepair encode only"]
#: also available: "python dataset", encode_dataset the way it ran before the native pipeline
#: (Python readers and writers, one worker process per core; processes not counted in CPU time)


def build_shards(folder: Path, mb: float, n_shards: int) -> int:
    data = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"
    docs = []
    for p in sorted(data.glob("*.txt")):
        docs += [d for d in p.read_text(encoding="utf-8").split("\n\n") if d.strip()]
    random.Random(20261201).shuffle(docs)
    per_shard = int(mb * 1e6) // n_shards
    (folder / "jsonl").mkdir(parents=True, exist_ok=True)
    (folder / "parquet").mkdir(parents=True, exist_ok=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    k, total = 0, 0
    for s in range(n_shards):
        shard, size = [], 0
        while size < per_shard:
            d = docs[k % len(docs)]
            k += 1
            shard.append(d)
            size += len(d.encode("utf-8"))
        total += size
        with open(folder / "jsonl" / f"part-{s:05d}.jsonl", "w", encoding="utf-8") as f:
            for d in shard:
                f.write(json.dumps({"id": k, "text": d}, ensure_ascii=False) + "\n")
        pq.write_table(pa.table({"text": shard}), folder / "parquet" / f"part-{s:05d}.parquet")
    return total


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reset_peak() -> float:
    """Resets the peak resident size (Linux) and returns the current one, MB."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _status_mb("VmRSS")


def child(peer: str, fmt: str, threads: int, folder: Path, encoding: str, gig_pretok: str) -> dict:
    import numpy as np

    paths = sorted(str(p) for p in (folder / fmt).iterdir())
    nt = None if threads == 0 else threads
    t0 = time.perf_counter()
    if peer.startswith("gigatoken"):
        import awkward as ak
        import gigatoken

        from bytepair.registry import read_bundled_ranks

        ranks = Path(tempfile.mkdtemp(prefix="bench-ranks-")) / f"{encoding}.tiktoken"
        ranks.write_bytes(read_bundled_ranks(encoding))  # the same ranks bytepair bundles
        gt = gigatoken.Tokenizer.from_tiktoken(str(ranks), pretokenizer=gig_pretok)
        src = gigatoken.JsonlFileSource(paths) if fmt == "jsonl" else gigatoken.ParquetFileSource(paths)

        def run(i: int):
            return gt.encode_files(src, parallel=threads != 1)

        def ids_of(a):
            return np.asarray(ak.flatten(a), dtype=np.uint32)
    else:
        import bytepair
        from bytepair.distributed import encode_dataset, iter_documents

        tok = bytepair.get_encoding(encoding)

        if peer == "bytepair files":

            def run(i: int):
                return tok.encode_files(paths, num_threads=nt)

            def ids_of(r):
                return r[0]
        elif peer in ("bytepair dataset", "python dataset"):
            if peer == "python dataset":  # the pre-pipeline path: Python readers, worker processes
                from bytepair.distributed import encode as enc

                enc.native.policy_lists = lambda *a: None  # type: ignore[assignment]
                enc._encode_shard = enc._encode_shard_python  # type: ignore[assignment]
            out_root = Path(tempfile.mkdtemp(prefix="bench-dataset-"))

            def run(i: int):
                out = out_root / f"run{i}"
                return out, encode_dataset(paths, out, tokenizer=tok, workers=nt, progress=False)

            def ids_of(r):
                out, m = r
                dtype = np.dtype("<u2" if m["dtype"] == "uint16" else "<u4")
                ids = np.concatenate([np.fromfile(out / s["output"], dtype=dtype) for s in m["shards"]])
                return ids[ids != tok.eot_token].astype(np.uint32)  # eot appended per document
        elif peer == "bytepair batch":

            def run(i: int):
                docs = [d for p in paths for d in iter_documents(p)]
                return tok.encode_batch_to_numpy(docs, num_threads=nt, disallowed_special=())

            def ids_of(r):
                return r[0]
        else:
            docs = [d for p in paths for d in iter_documents(p)]

            def run(i: int):
                return tok.encode_batch_to_numpy(docs, num_threads=nt, disallowed_special=())

            def ids_of(r):
                return r[0]

    load = time.perf_counter() - t0
    base = reset_peak()
    times, cpus, peak, first = [], [], 0.0, None
    for i in range(2):
        c, t = time.process_time(), time.perf_counter()
        got = run(i)
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
        if first is None:  # peak of the first call, its result included
            first, peak = got, _status_mb("VmHWM") - base
        del got
    ids = ids_of(first)
    digest = hashlib.sha256(np.ascontiguousarray(ids, dtype=np.uint32).tobytes()).hexdigest()[:16]
    if peer in ("bytepair dataset", "python dataset"):
        shutil.rmtree(out_root, ignore_errors=True)
    return {"load": load, "times": times, "cpus": cpus, "peak_mb": peak, "ids": digest, "n": len(ids)}


def _parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=30)
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--encoding", default="o200k_base")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--formats", default="jsonl,parquet")
    ap.add_argument("--cores", default="1,all")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--keep", default=None, help="folder to keep/reuse the shards in")
    ap.add_argument("--pin", default="0", help="the CPU the 1-core runs are pinned to (taskset -c)")
    ap.add_argument("--child", nargs=4, metavar=("PEER", "FORMAT", "THREADS", "FOLDER"), help=argparse.SUPPRESS)
    return ap.parse_args()


def _print_header(args: argparse.Namespace, mb: float) -> None:
    import platform

    import bytepair

    try:
        from importlib.metadata import version

        gver = version("gigatoken")
    except Exception:  # noqa: BLE001
        gver = "?"
    print(f"# {mb:.1f} MB of text in {args.shards} shards per format, {args.encoding}; "
          f"bytepair {bytepair.__version__}, gigatoken {gver}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.2f}")
    print(f"# command: {' '.join(sys.argv)}")


def _run_children(args: argparse.Namespace, folder: Path) -> tuple:
    """Every (format, cores, peer) in a fresh process, ``--repeats`` times;
    returns the best of the repeats per key and the ids digests per format."""
    best: dict = {}
    digests: dict = {}
    for rep in range(args.repeats):
        for fmt in args.formats.split(","):
            for cores in args.cores.split(","):
                for peer in args.peers.split(","):
                    threads = 1 if cores == "1" else 0
                    cmd = [sys.executable, __file__, "--encoding", args.encoding,
                           "--child", peer, fmt, str(threads), str(folder)]
                    env = dict(os.environ)
                    if cores == "1":
                        cmd = ["taskset", "-c", args.pin, *cmd]
                        env["RAYON_NUM_THREADS"] = "1"
                    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800, check=False)
                    if r.returncode != 0:
                        print(f"{peer} {fmt} {cores}: failed\n{r.stderr[-2000:]}", file=sys.stderr)
                        continue
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                    digests.setdefault((fmt,), set()).add((res["ids"], res["n"]))
                    key = (fmt, cores, peer)
                    old = best.get(key)
                    if old is None:
                        best[key] = res
                    else:  # best of the repeats, per column
                        old["times"] = [min(a, b) for a, b in zip(old["times"], res["times"])]
                        old["cpus"] = [min(a, b) for a, b in zip(old["cpus"], res["cpus"])]
                        old["load"] = min(old["load"], res["load"])
                        old["peak_mb"] = max(old["peak_mb"], res["peak_mb"])
    return best, digests


def _print_table(args: argparse.Namespace, best: dict, digests: dict, mb: float) -> None:
    for (fmt,), ds in digests.items():
        status = "identical" if len(ds) == 1 else f"DIFFER: {sorted(ds)}"
        print(f"# {fmt}: ids of every peer {status}")
    print()
    print("| format | cores | peer | first MB/s | second MB/s | first MB/CPU-s | second MB/CPU-s | "
          "first vs gigatoken | second vs gigatoken | load s | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for fmt in args.formats.split(","):
        for cores in args.cores.split(","):
            g = best.get((fmt, cores, "gigatoken files"))
            for peer in args.peers.split(","):
                res = best.get((fmt, cores, peer))
                if res is None:
                    continue
                first, second = (mb / t for t in res["times"])
                cfirst, csecond = (mb / max(t, 1e-9) for t in res["cpus"])
                rf = f"{g['times'][0] / res['times'][0]:.2f}x" if g else "-"
                rs = f"{g['times'][1] / res['times'][1]:.2f}x" if g else "-"
                print(f"| {fmt} | {cores} | {peer} | {first:.0f} | {second:.0f} | {cfirst:.0f} | {csecond:.0f} | {rf} | {rs} "
                      f"| {res['load']:.2f} | {res['peak_mb']:.0f} |")


def main() -> int:
    args = _parse_args()
    gig_pretok = {"o200k_base": "o200k", "cl100k_base": "cl100k", "gpt2": "gpt2", "r50k_base": "gpt2"}[args.encoding]
    if args.child:
        peer, fmt, threads, folder = args.child
        print(json.dumps(child(peer, fmt, int(threads), Path(folder), args.encoding, gig_pretok)))
        return 0

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-shards-"))
    marker = folder / f"built-{args.mb}-{args.shards}.json"
    if marker.exists():
        total = json.loads(marker.read_text())["bytes"]
    else:
        total = build_shards(folder, args.mb, args.shards)
        marker.write_text(json.dumps({"bytes": total}))
    mb = total / 1e6
    _print_header(args, mb)
    best, digests = _run_children(args, folder)
    _print_table(args, best, digests, mb)
    print(f"\n# load average at end {os.getloadavg()[0]:.2f}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
