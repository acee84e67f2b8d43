"""Encoding benchmark: bytepair against gigatoken, quicktok and tiktoken (and,
with ``--peers``, Hugging Face ``tokenizers``, riptoken, bpe-openai, tokie).

Protocol:

* **One fresh process per (peer, encoding, corpus)**, started by this script
  (``--child``), so no peer's caches or allocator state carry over from
  another corpus or peer.
* **Identical slices for every peer**: the corpus (``$BYTEPAIR_DATA/corpora``,
  the six of ../shared/DATA.md) cut into five consecutive slices of 1 MB
  (``min(1 MB, corpus / 5)``: 0.5 MB for the 2.5 MB Korean corpus), cut at
  character boundaries.
* **cold**: the first slice of the new process, tokenizer construction
  included (imports excluded); MB/s = slice MB / (load + first encode).
* **steady**: the first slice untimed, then the median of slices 2-5: caches
  are warm on the corpus's common words, never on the timed text.
* **arrays vs arrays** (``bytepair-np`` = ``encode_to_numpy``, ``gigatoken-np`` =
  ``Tokenizer.encode``) and **lists vs lists** (``bytepair`` =
  ``encode_ordinary``, ``gigatoken`` = ``as_tiktoken().encode_ordinary``,
  ``quicktok``, ``tiktoken``).
* ``--cores 1``: children pinned with ``taskset -c 0`` and timed in CPU time
  (``time.process_time``: robust to other load on a shared machine);
  ``--cores all``: unpinned, wall time (a peer may use several threads).
* Exactness: every child hashes its ids per slice; a peer whose hash differs
  from tiktoken's (built offline from bytepair's bundled rank files) is marked
  WRONG and never counts as the fastest exact peer.

Groups (``--groups``):

  fresh      the table above, per encoding and corpus
  longlived  one process encodes 50 MB of the *other* corpora (1 MB slices,
             round robin), then the target corpus by the steady protocol; the
             ratio is to the fresh process's steady figure; RSS reported
  threads    one 10 MB text (the corpus repeated to 10 MB), ``encode_to_numpy``
             with ``num_threads=1`` and ``2`` (and gigatoken's ``encode``),
             wall time, one process, interleaved (order reversed every other
             repetition); ratios are medians of the per-repetition ratios;
             the 2-thread call's share of 2 cores kept busy (CPU time / 2 x
             wall) and its CPU time per byte against one thread's tell idle
             cores from threads that each ran slower; the host's steal time
             during the cell is printed beside it
  batch      the steady slices cut into 1-10 KB documents: bytepair
             ``encode_batch_to_numpy`` all cores and 1 thread, gigatoken
             ``encode_batch`` (parallel and not); like ``fresh``, one process
             per (peer, corpus), warm on the first slice, median of the later
             slices, but wall time and unpinned; ``--repeat`` rounds (a batch
             call encodes a share on its calling thread, with that thread's
             piece cache: in one shared process the calls warmed each other);
             plus "all / 1 thread, paired": one process per round holding
             two encoders with their own caches (one on 1 thread, one on all),
             each warm on the first slice, then every later slice encoded by
             both back to back: the median and range of those ratios
  worst      hostile inputs ('x'*N, N spaces, random base64, one long Korean
             word), N = 10 KB .. 10 MB, ns per byte (bytepair, gigatoken,
             tiktoken; the best of ``--repeat`` distinct texts per size, at
             most 3 above 1 MB), and the 10 MB / 10 KB ratio (linear: <= 2)
  decode     ids -> str, bytepair against tiktoken

    python benches/bench_encode.py --quick                       # cl100k_base, fresh + longlived, 1 core
    python benches/bench_encode.py --encodings gpt2 cl100k_base o200k_base --cores 1 all
    python benches/bench_encode.py --groups threads batch worst --encodings cl100k_base
"""

from __future__ import annotations

import argparse
import base64
import gc
import hashlib
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

# numpy's bundled OpenBLAS starts its worker threads at import, and each spins
# (busy-waits for work) for about a tenth of a second, in every process that
# imports numpy, before it sleeps. No peer here calls BLAS, but a child process
# times its calls within that window: a spinning thread took the second core
# from every two-thread call (bytepair's and gigatoken's alike; measured: gpt2
# batches on 2 threads ran at 100-140 MB/s with it, 360-490 without). Set for
# every child of every peer, before numpy is imported; a value already in the
# environment is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
ARRAY_PEERS = ["bytepair-np", "gigatoken-np"]
LIST_PEERS = ["bytepair", "gigatoken", "quicktok", "tiktoken"]
EXTRA_PEERS = ["hf", "riptoken", "bpe-openai", "tokie"]
PEERS = ARRAY_PEERS + LIST_PEERS
GROUPS = ["fresh", "longlived", "threads", "batch", "worst", "decode"]
SLICE = 1_000_000
N_SLICES = 5
OTHER_MB = 50
GIGA_PRETOK = {"gpt2": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k"}

Encode = Callable[[str], Any]


# ---------------------------------------------------------------- data


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def ranks_path(name: str) -> Path:
    """A .tiktoken file for ``name`` (gigatoken loads files): the data
    directory's copy, else bytepair's bundled ranks written to a temp file."""
    p = data_dir().parent / "ranks" / f"{name}.tiktoken"
    if p.exists():
        return p
    from bytepair import registry

    out = Path(tempfile.gettempdir()) / f"bytepair-bench-{name}.tiktoken"
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        data = registry.read_bundled_ranks(name)
        tmp.write_bytes(data if isinstance(data, bytes) else data.encode())
        os.replace(tmp, out)
    return out


def corpus_bytes(name: str) -> bytes:
    return (data_dir() / f"{name}.txt").read_bytes()


def slices(raw: bytes, n: int = N_SLICES, size: int = SLICE) -> List[str]:
    """``n`` consecutive slices of ``min(size, len / n)`` bytes, each cut back
    to whole characters (identical for every peer)."""
    size = min(size, len(raw) // n)
    return [raw[k * size:(k + 1) * size].decode("utf-8", "ignore") for k in range(n)]


def other_text(target: str, corpora: List[str], mb: int) -> List[str]:
    """``mb`` 1 MB slices of the corpora other than ``target``, round robin."""
    raws = [corpus_bytes(c) for c in corpora if c != target]
    out: List[str] = []
    k = 0
    while len(out) < mb and raws:
        raw = raws[k % len(raws)]
        off = (k // len(raws)) * SLICE % max(1, len(raw) - SLICE)
        out.append(raw[off:off + SLICE].decode("utf-8", "ignore"))
        k += 1
    return out


def documents(text: str, lo: int = 1000, hi: int = 10_000) -> List[str]:
    """Consecutive paragraphs packed into documents of lo..hi bytes (longer
    paragraphs are cut at a character boundary)."""
    docs, cur, size = [], [], 0
    for para in text.split("\n\n"):
        b = len(para.encode())
        if b > hi:
            enc = para.encode()
            for i in range(0, len(enc), hi):
                docs.append(enc[i:i + hi].decode("utf-8", "ignore"))
            continue
        cur.append(para)
        size += b + 2
        if size >= lo:
            docs.append("\n\n".join(cur))
            cur, size = [], 0
    if cur:
        docs.append("\n\n".join(cur))
    return [d for d in docs if d]


def hostile(kind: str, n: int, seed: int = 0) -> str:
    """A hostile text of about `n` bytes; each seed gives a different text
    (the runs of one byte are `seed % 997` bytes shorter), so no peer's piece
    cache can answer a timed call from an earlier one."""
    rng = random.Random(seed)
    if kind == "x":
        return "x" * (n - seed % 997)
    if kind == "spaces":
        return " " * (n - seed % 997)
    if kind == "base64":
        return base64.b64encode(rng.randbytes(n * 3 // 4 + 3)).decode()[:n]
    if kind == "korean":  # one word of random Hangul syllables (3 bytes each)
        return "".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(n // 3))
    raise ValueError(kind)


# ---------------------------------------------------------------- peers


def tiktoken_offline(name: str):
    """A tiktoken Encoding built from bytepair's bundled rank file (no network)."""
    from bytepair import registry

    return registry.tiktoken_encoding(name)


def hf_from_ranks(name: str):
    """Hugging Face tokenizers built from the same ranks (DATA.md's recipe)."""
    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

    import bytepair
    from bytepair import reference

    enc = bytepair.get_encoding(name)
    b2u = reference.bytes_to_unicode()
    toks = enc.token_bytes_list

    def u(t: bytes) -> str:
        return "".join(b2u[b] for b in t)

    vocab = {u(t): i for i, t in enumerate(toks)}
    merges = [(u(toks[a]), u(toks[b])) for a, b in enc.merges]
    hf = HFTokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    pat = enc.pattern.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pat), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    hf.decoder = decoders.ByteLevel()
    return hf


def gigatoken_tokenizer(name: str):
    import gigatoken

    return gigatoken.Tokenizer.from_tiktoken(str(ranks_path(name)), pretokenizer=GIGA_PRETOK[name])


def import_peer(peer: str) -> None:
    """Imports outside the timed load (cold excludes interpreter start and imports)."""
    mods = {"bytepair": ["bytepair", "numpy"], "bytepair-np": ["bytepair", "numpy"], "gigatoken": ["gigatoken"],
            "gigatoken-np": ["gigatoken"], "quicktok": ["quicktok"], "tiktoken": ["tiktoken", "bytepair"],
            "hf": ["tokenizers", "bytepair"], "riptoken": ["riptoken", "tiktoken"], "bpe-openai": ["bpe_openai"],
            "tokie": ["tokie", "tokenizers"], "bytepair-batch": ["bytepair"], "bytepair-batch1": ["bytepair"],
            "gigatoken-batch": ["gigatoken", "awkward"], "gigatoken-batch1": ["gigatoken", "awkward"]}
    for m in mods.get(peer, []) + ["numpy"]:
        __import__(m)


def load_peer(peer: str, name: str) -> Encode:
    """Builds the tokenizer (timed as part of cold) and returns its encode call."""
    if peer in ("bytepair", "bytepair-np"):
        import bytepair

        enc = bytepair.get_encoding(name)
        return enc.encode_to_numpy if peer == "bytepair-np" else enc.encode_ordinary
    # batch peers (the batch group): a list of documents -> every id, flat
    if peer in ("bytepair-batch", "bytepair-batch1"):
        import bytepair

        enc = bytepair.get_encoding(name)
        threads = 1 if peer == "bytepair-batch1" else None
        return lambda docs: enc.encode_batch_to_numpy(docs, num_threads=threads)[0]
    if peer in ("gigatoken-batch", "gigatoken-batch1"):
        tk, par = gigatoken_tokenizer(name), peer == "gigatoken-batch"
        # an awkward array: ids_hash flattens it, outside the timed call
        return lambda docs: tk.encode_batch(docs, parallel=par)
    if peer == "gigatoken-np":
        return gigatoken_tokenizer(name).encode
    if peer == "gigatoken":
        return gigatoken_tokenizer(name).as_tiktoken().encode_ordinary
    if peer == "quicktok":
        import quicktok

        return quicktok.get_encoding(name).encode_ordinary
    if peer == "tiktoken":
        return tiktoken_offline(name).encode_ordinary
    if peer == "hf":
        hf = hf_from_ranks(name)
        return lambda t: hf.encode(t, add_special_tokens=False).ids
    if peer == "riptoken":
        import riptoken

        return riptoken._build_encoding(tiktoken_offline(name)).encode_ordinary
    if peer == "bpe-openai":
        import bpe_openai

        return bpe_openai.build_encoding_from_name(name).encode_ordinary
    if peer == "tokie":
        import tokie

        hf = hf_from_ranks(name)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer.json")
            hf.save(path)
            tk = tokie.Tokenizer.from_json(path)
        return lambda t: tk.encode(t).ids
    raise ValueError(peer)


def ids_hash(ids: Any) -> str:
    import numpy as np

    if type(ids).__module__.startswith("awkward"):  # gigatoken's encode_batch: one list per document
        import awkward as ak

        ids = ak.to_numpy(ak.flatten(ids))
    return hashlib.blake2b(np.asarray(ids, dtype=np.uint32).tobytes(), digest_size=12).hexdigest()


def version(dist: str) -> str:
    try:
        from importlib.metadata import version as v

        return v(dist)
    except Exception:  # noqa: BLE001  (metadata missing: report unknown)
        return "?"


def rss_mb() -> Tuple[float, float]:
    """(current, peak) resident set size in MB; freed heap memory is handed
    back first (glibc keeps freed 1 MB strings otherwise), so "current" is
    what the process still holds."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    cur = 0.0
    try:
        with open("/proc/self/statm") as f:
            cur = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        pass
    return cur, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6  # ru_maxrss: KiB


# ---------------------------------------------------------------- child processes


def batch_documents(parts: List[str]) -> List[List[str]]:
    """Each slice cut into 1-10 KB documents, with CPython's cached UTF-8 copy
    of every document made before any timing."""
    docs = [documents(p) for p in parts]
    for d in docs:
        for x in d:
            _utf8(x)
    return docs


def batch_pair(name: str, data: bytes, parts: List[List[str]], warm: List[List[str]],
               threads: Optional[int] = None) -> Tuple[List[float], bool]:
    """Two fresh encoders of ``name`` in this process, one used on 1 thread
    and one on ``threads`` (None: all cores), each with its own seed and piece
    caches (so neither warms the other). Each encodes the ``warm`` documents
    (untimed); then every slice of ``parts`` after the first is encoded once by
    each, back to back, the order alternating. Returns the per-slice ratios
    1 thread / ``threads`` and whether both gave the same ids."""
    from bytepair import registry

    one, every = registry.load_bundled(name, data), registry.load_bundled(name, data)
    runs = {"1": lambda d: one.encode_batch_to_numpy(d, num_threads=1)[0],
            "all": lambda d: every.encode_batch_to_numpy(d, num_threads=threads)[0]}
    for run in runs.values():
        for w in warm:
            run(w)
    ratios, same = [], True
    for i, d in enumerate(parts[1:]):
        t: Dict[str, float] = {}
        got = {}
        for k in (["1", "all"] if i % 2 else ["all", "1"]):
            s = time.perf_counter()
            got[k] = runs[k](d)
            t[k] = time.perf_counter() - s
        ratios.append(t["1"] / t["all"])
        same = same and ids_hash(got["1"]) == ids_hash(got["all"])
    return ratios, same


def child_batch_pair(job: Dict[str, Any]) -> Dict[str, Any]:
    """The batch group's paired cell (see :func:`batch_pair`), both encoders
    warm on the first slice's documents: the per-slice ratio all / 1 thread
    is timed in one machine phase. Fresh-process cells (the other columns) are
    timed seconds to minutes apart, which on a shared VM moves them by 30 %."""
    from bytepair import registry

    parts = batch_documents(slices(corpus_bytes(job["corpus"])))
    ratios, same = batch_pair(job["encoding"], registry.read_bundled_ranks(job["encoding"]), parts, parts[:1])
    return {"ratios": ratios, "same": same}


def child(job: Dict[str, Any]) -> Dict[str, Any]:
    if job["kind"] == "batch_pair":
        return child_batch_pair(job)
    clock = time.process_time if job["clock"] == "cpu" else time.perf_counter
    peer, name = job["peer"], job["encoding"]
    parts: List[Any] = slices(corpus_bytes(job["corpus"]))
    if job["kind"] == "batch":
        parts = batch_documents(parts)
    others = other_text(job["corpus"], job["corpora"], job["other_mb"]) if job["kind"] == "long" else []
    import_peer(peer)
    gc.collect()
    t0 = clock()
    enc = load_peer(peer, name)
    t1 = clock()
    size = (lambda p: sum(len(x.encode()) for x in p)) if job["kind"] == "batch" else (lambda p: len(p.encode()))
    out: Dict[str, Any] = {"load_s": t1 - t0, "mb": [size(p) / 1e6 for p in parts]}
    if others:
        t = clock()
        for o in others:
            enc(o)
        out["other_s"] = clock() - t
        out["other_mb"] = sum(len(o.encode()) for o in others) / 1e6
        others.clear()  # RSS below: the encoder's memory, not 50 MB of text
    # Each result is hashed once its call is timed and then dropped, as a caller that uses each result and moves
    # on would: kept, a peer that allocates a new int object per id (gigatoken's lists) pays fresh pages for every
    # later slice (measured: its lists 75-77 against 86-137 MB/s), which bytepair's shared ints do not.
    times, hashes = [], []
    for p in parts:
        t = clock()
        r = enc(p)
        times.append(clock() - t)
        hashes.append(ids_hash(r))
        del r
    out["times"] = times
    out["cold_s"] = (t1 - t0) + times[0] if not others else None
    out["rss_mb"], out["peak_rss_mb"] = rss_mb()
    if peer.startswith("bytepair"):
        import bytepair

        stats = bytepair.get_encoding(name)._core.piece_cache_stats()
        out["cache_mb"] = stats["bytes"] / 1e6 if stats else None
        out["cache_wipes"] = stats["wipes"] if stats else None
    out["hashes"] = hashes
    return out


def run_child(job: Dict[str, Any], pin: bool) -> Optional[Dict[str, Any]]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(job)]
    if pin and shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        err = (r.stderr.strip().splitlines() or ["?"])[-1]
        print(f"  {job['peer']} {job['encoding']} {job['corpus']}: failed ({err[:100]})", file=sys.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def steady(res: Any) -> float:
    """MB/s, median of the timed slices 2-5 (each slice's own MB); for a list
    of rounds, the median over rounds."""
    if isinstance(res, list):
        return statistics.median([steady(r) for r in res]) if res else 0.0
    if not res:
        return 0.0
    return statistics.median(mb / t for mb, t in zip(res["mb"][1:], res["times"][1:]) if t > 0)


def cold(res: Any) -> float:
    if isinstance(res, list):
        return statistics.median([cold(r) for r in res]) if res else 0.0
    return res["mb"][0] / res["cold_s"] if res and res.get("cold_s") else 0.0


def rounds(job: Dict[str, Any], pin: bool, n: int) -> List[Dict[str, Any]]:
    return [r for r in (run_child(job, pin) for _ in range(n)) if r]


def table(title: str, header: List[str], rows: List[List[str]]) -> None:
    print(f"\n#### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    sys.stdout.flush()


def fmt(v: float, wrong: bool = False) -> str:
    return (f"{v:.0f}" if v >= 10 else f"{v:.1f}") + (" WRONG" if wrong else "") if v else "fails"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if a and b else "-"


def run_fresh(name: str, corpora: List[str], peers: List[str], cores: str, longlived: bool, n_rounds: int) -> None:
    pin = cores == "1"
    clock = "cpu" if pin else "wall"
    where = "1 core (taskset -c 0), CPU time" if pin else "all cores, wall time"
    run_peers = peers if "tiktoken" in peers else peers + ["tiktoken"]  # the exactness reference
    fresh: Dict[Tuple[str, str], List[Dict[str, Any]]] = {(c, p): [] for c in corpora for p in run_peers}
    for _ in range(n_rounds):  # rounds interleave the peers: each round's processes ran in the same machine phase
        for c in corpora:
            for p in run_peers:
                r = run_child({"kind": "fresh", "peer": p, "encoding": name, "corpus": c, "clock": clock,
                               "corpora": corpora, "other_mb": 0}, pin)
                if r:
                    fresh[c, p].append(r)
    arrays = [p for p in peers if p in ARRAY_PEERS]
    lists = [p for p in peers if p not in ARRAY_PEERS]

    def wrong(c: str, p: str) -> bool:
        ref, got = fresh.get((c, "tiktoken")), fresh.get((c, p))
        return bool(ref and got and any(g["hashes"] != ref[0]["hashes"] for g in got))

    def best_other(c: str, group: List[str], how: Callable[[Any], float]) -> float:
        return max((how(fresh[c, p]) for p in group if not p.startswith("bytepair") and not wrong(c, p)),
                   default=0.0)

    for col, how in (("steady", steady), ("cold", cold)):
        header = ["corpus", "slice MB"] + arrays + (["np ratio"] if "bytepair-np" in arrays else []) + lists
        if "bytepair" in lists:
            header.append("list / fastest exact")
        rows = []
        for c in corpora:
            any_res = next((r[0] for r in (fresh[c, p] for p in run_peers) if r), None)
            row = [c, f"{any_res['mb'][0]:.2f}" if any_res else "-"]
            row += [fmt(how(fresh[c, p]), wrong(c, p)) for p in arrays]
            if "bytepair-np" in arrays:
                row.append(ratio(how(fresh[c, "bytepair-np"]), best_other(c, arrays, how)))
            row += [fmt(how(fresh[c, p]), wrong(c, p)) for p in lists]
            if "bytepair" in lists:
                row.append(ratio(how(fresh[c, "bytepair"]), best_other(c, lists, how)))
            rows.append(row)
        what = ("steady: first slice untimed, median of 4 later slices" if col == "steady"
                else "cold: new process, tokenizer load + first slice")
        table(f"{name}, {where}: {what} (MB/s)", header, rows)
    loads = [[p] + [f"{statistics.median(r['load_s'] for r in fresh[c, p]) * 1e3:.0f}" if fresh[c, p] else "-"
                    for c in corpora] for p in run_peers]
    table(f"{name}, {where}: tokenizer load (ms)", ["peer"] + corpora, loads)
    if not longlived:
        return
    rows = []
    long_peers = [p for p in peers if p != "tiktoken"]
    for c in corpora:
        for p in long_peers:
            rs = rounds({"kind": "long", "peer": p, "encoding": name, "corpus": c, "clock": clock,
                         "corpora": CORPORA, "other_mb": OTHER_MB}, pin, n_rounds)
            f = fresh[c, p]
            ref = fresh.get((c, "tiktoken"))
            bad = bool(ref and any(r["hashes"] != ref[0]["hashes"] for r in rs))
            r = rs[-1] if rs else None
            cache = (f"{r['cache_mb']:.0f} ({r['cache_wipes']} wipes)" if r and r.get("cache_mb") is not None
                     else "-")
            rows.append([c, p, fmt(steady(f)), fmt(steady(rs), bad), ratio(steady(rs), steady(f)),
                         f"{r['other_mb'] / r['other_s']:.0f}" if r and r.get("other_s") else "-",
                         f"{f[-1]['rss_mb']:.0f}" if f else "-",
                         f"{r['rss_mb']:.0f} / {r['peak_rss_mb']:.0f}" if r else "-", cache])
    table(f"{name}, {where}: long-lived process ({OTHER_MB} MB of the other corpora first, then the corpus; steady MB/s)",
          ["corpus", "peer", "fresh", "long-lived", "long / fresh", "other MB/s", "fresh RSS MB",
           "long RSS / peak MB", "piece cache MB"], rows)


# ---------------------------------------------------------------- in-process groups


def median_time(fn: Callable[[], object], reps: int, clock: Callable[[], float] = time.perf_counter) -> float:
    ts = []
    for _ in range(reps):
        gc.collect()
        t = clock()
        fn()
        ts.append(clock() - t)
    return statistics.median(ts)


class Steal:
    """The share of the machine's CPU time the hypervisor took from this VM
    (``steal`` in ``/proc/stat``) between ``start()`` and ``share()``: on the
    shared 2-vCPU benchmark VM it reached 28-40 % of a run's CPU time while
    another tenant was busy, which halves a two-thread figure while a
    single-thread one, timed a moment later, escapes it. Printed beside the
    wall-time cells so such a cell can be told from a slow encoder."""

    def __init__(self) -> None:
        self.t0: List[int] = []

    @staticmethod
    def _now() -> List[int]:
        try:
            with open("/proc/stat") as f:
                return [int(x) for x in f.readline().split()[1:]]
        except (OSError, ValueError):
            return []

    def start(self) -> None:
        self.t0 = self._now()

    def share(self) -> str:
        t1 = self._now()
        if len(self.t0) < 8 or len(t1) < 8:
            return "-"
        d = [b - a for a, b in zip(self.t0, t1)]
        total = sum(d[:8])
        return f"{100 * d[7] / total:.0f} %" if total else "-"


def paired(xs: List[float], ys: List[float]) -> float:
    """The median of the per-repetition ratios ``x / y`` (each pair timed back
    to back, so a slow phase of the machine slows both)."""
    rs = [x / y for x, y in zip(xs, ys) if x > 0 and y > 0]
    return statistics.median(rs) if rs else 0.0


def run_threads(name: str, corpora: List[str], reps: int) -> None:
    import numpy as np

    import bytepair

    enc = bytepair.get_encoding(name)
    try:
        giga = gigatoken_tokenizer(name)
    except Exception:  # noqa: BLE001  (peer missing)
        giga = None
    rows = []
    steal = Steal()
    for c in corpora:
        raw = corpus_bytes(c)
        raw = (raw * (10_000_000 // len(raw) + 1))[:10_000_000]
        text = raw.decode("utf-8", "ignore")
        mb = len(text.encode()) / 1e6

        def one() -> Any:
            return enc.encode_to_numpy(text, num_threads=1)

        def two() -> Any:
            return enc.encode_to_numpy(text, num_threads=2)

        try:
            same = np.array_equal(one(), two())
        except TypeError:  # no num_threads on this build
            two, same = None, None  # type: ignore[assignment]
        if giga is not None:
            same_g = np.array_equal(one(), giga.encode(text))
        calls: Dict[str, Callable[[], Any]] = {"1 thread": one}
        if two is not None:
            calls["2 threads"] = two
        if giga is not None:
            calls["gigatoken"] = lambda: giga.encode(text)
        res: Dict[str, List[float]] = {k: [] for k in calls}
        busy: Dict[str, List[float]] = {k: [] for k in calls}  # cores kept busy: process CPU time / wall
        cpu_mb: Dict[str, List[float]] = {k: [] for k in calls}  # process CPU seconds per MB, all threads
        steal.start()
        for r in range(reps):  # interleaved, the order reversed every other repetition
            for k in (list(calls) if r % 2 == 0 else list(calls)[::-1]):
                gc.collect()
                c0, t0 = time.process_time(), time.perf_counter()
                calls[k]()
                wall, used = time.perf_counter() - t0, time.process_time() - c0
                res[k].append(mb / wall)
                busy[k].append(used / wall)
                cpu_mb[k].append(used / mb)
        rate = {k: statistics.median(v) for k, v in res.items()}
        # of the 2-thread call: the share of 2 cores kept busy, and its CPU time per byte against one
        # thread's (above 1: each thread ran slower than a lone thread, as on SMT siblings)
        busy2 = f"{statistics.median(busy['2 threads']) / 2:.0%}" if two is not None else "-"
        cpu_ratio = f"{paired(cpu_mb['2 threads'], cpu_mb['1 thread']):.2f}" if two is not None else "-"
        rows.append([c, fmt(rate["1 thread"]), fmt(rate.get("2 threads", 0.0)),
                     f"{paired(res['2 threads'], res['1 thread']):.2f}x" if two is not None else "-",
                     "yes" if same else ("-" if same is None else "NO"),
                     fmt(rate.get("gigatoken", 0.0), giga is not None and not same_g),
                     f"{paired(res['2 threads'], res['gigatoken']):.2f}x" if two is not None and giga is not None
                     else "-",
                     busy2, cpu_ratio, steal.share()])
    table(f"{name}: one 10 MB text, encode_to_numpy, wall time, median of {reps} (MB/s; ratios: median of the "
          "per-repetition ratios)",
          ["corpus", "1 thread", "num_threads=2", "2 / 1", "ids equal", "gigatoken encode", "2 threads / gigatoken",
           "2 threads: cores busy", "CPU per byte, 2 / 1", "host steal"],
          rows)


def _utf8(s: str) -> None:
    """Makes CPython's cached UTF-8 copy of ``s`` (``PyUnicode_AsUTF8AndSize``),
    which every native peer reads instead of encoding the text itself."""
    import ctypes

    f = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    f.restype, f.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    f(s, None)


BATCH_PEERS = {
    "bytepair all cores": "bytepair-batch",
    "bytepair 1 thread": "bytepair-batch1",
    "gigatoken": "gigatoken-batch",
    "gigatoken serial": "gigatoken-batch1",
}


def run_batch(name: str, corpora: List[str], reps: int) -> None:
    """The batch group by the fresh-process protocol: one process per (batch
    peer, corpus), each warming on the first slice's documents (untimed) and
    then timing one batch call per later slice (wall time, unpinned); the
    median over the slices, then over ``reps`` rounds (peers interleaved per
    round). In one shared process the calls warmed each other: a batch call
    encodes a share on its calling thread, with that thread's piece cache, so
    the single-thread call made from the same thread saw half of every slice
    first; and the other calls' tables evicted each peer's from the L3."""
    rows = []
    steal = Steal()
    for c in corpora:
        res: Dict[str, List[Dict[str, Any]]] = {k: [] for k in BATCH_PEERS}
        steal.start()
        for r in range(max(1, reps)):
            order = list(BATCH_PEERS) if r % 2 == 0 else list(BATCH_PEERS)[::-1]
            for k in order:
                job = {"peer": BATCH_PEERS[k], "encoding": name, "corpus": c, "corpora": corpora, "kind": "batch",
                       "clock": "wall", "other_mb": 0}
                got = run_child(job, pin=False)
                if got is not None:
                    res[k].append(got)
        pair = [run_child({"peer": "bytepair-batch", "encoding": name, "corpus": c, "corpora": corpora,
                           "kind": "batch_pair"}, pin=False) for _ in range(max(1, reps))]
        pair_ratios = [x for p in pair if p for x in p["ratios"]]
        pair_bad = any(p and not p["same"] for p in pair)
        rate = {k: steady(v) for k, v in res.items()}
        ref = [r["hashes"][1:] for r in res["bytepair 1 thread"]]
        bad = {k: bool(ref and any(r["hashes"][1:] != ref[0] for r in v)) for k, v in res.items()}
        rows.append([c] + [fmt(rate[k], bad[k]) if res[k] else "fails" for k in BATCH_PEERS] +
                     [ratio(rate["bytepair all cores"], rate["bytepair 1 thread"]),
                      (f"{statistics.median(pair_ratios):.2f}x ({min(pair_ratios):.2f}-{max(pair_ratios):.2f})"
                       + (" WRONG" if pair_bad else "")) if pair_ratios else "fails",
                      ratio(rate["bytepair all cores"], rate["gigatoken"]), steal.share()])
    table(f"{name}: 1-10 KB documents of the steady slices, one batch call, a fresh process per peer and corpus, "
          f"wall time, median of {max(1, reps)} rounds (MB/s)",
          ["corpus"] + list(BATCH_PEERS) + ["all / 1 thread", "all / 1 thread, paired", "all / gigatoken", "host steal"],
          rows)


def run_worst(name: str, sizes: List[int], reps: int) -> None:
    """ns per byte on hostile inputs. Each size is timed over about as many
    bytes as the largest size (capped at 1 MB for the small ones): several
    distinct texts of that size, one call each, so the small sizes are not
    flattered by one text kept hot in the CPU caches, and each repetition on
    texts of its own, so no peer answers a timed call from its cache."""
    import numpy as np

    import bytepair

    enc = bytepair.get_encoding(name)
    tt = tiktoken_offline(name)
    try:
        giga = gigatoken_tokenizer(name)
    except Exception:  # noqa: BLE001
        giga = None
    # one thread and CPU time: linearity is about the work per byte (a parallel
    # encode would flatter the long inputs, wall time under load is noise)
    peers: Dict[str, Callable[[str], Any]] = {"bytepair": lambda t: enc.encode_to_numpy(t, num_threads=1)}
    if giga is not None:
        peers["gigatoken"] = giga.encode
    peers["tiktoken"] = tt.encode_ordinary
    rows = []
    for kind in ("x", "spaces", "base64", "korean"):
        per: Dict[str, Dict[int, str]] = {p: {} for p in peers}
        raw: Dict[str, Dict[int, float]] = {p: {} for p in peers}
        for n in sizes:
            count = max(1, min(100, min(sizes[-1], 1_000_000) // n))
            # the long inputs too get a few distinct texts (min of their times): one
            # call alone moved single cells by 1.5x between runs
            r = reps if n * count <= 1_000_000 else min(reps, 3)
            # every timed call gets a text no peer has seen (distinct per
            # repetition too): a repeated hostile text would time a peer's
            # cache of whole long pieces, not its encoder. Two more texts,
            # untimed, check the ids and warm each peer up.
            rounds = [[hostile(kind, n, seed=j * count + k) for k in range(count)] for j in range(r)]
            check = [hostile(kind, n, seed=r * count + k) for k in range(2)]
            nbs = [sum(len(t.encode()) for t in texts) for texts in rounds]
            want = None
            for p, f in peers.items():
                if p == "tiktoken" and n > 1_000_000:  # tiktoken overflows its stack on long runs
                    per[p][n] = "-"
                    continue
                try:
                    got = [np.asarray(f(t), dtype=np.uint32) for t in check]
                    if p == "bytepair":
                        want = got
                    ok = want is None or all(np.array_equal(a, b) for a, b in zip(got, want))
                    t = min(median_time(lambda f=f, texts=texts: [f(x) for x in texts], 1, time.process_time) / nb
                            for texts, nb in zip(rounds, nbs))
                    raw[p][n] = t * 1e9
                    per[p][n] = f"{raw[p][n]:.1f}" + ("" if ok else " WRONG")
                except BaseException as e:  # tiktoken panics are BaseException
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    per[p][n] = type(e).__name__
        lo, hi = sizes[0], sizes[-1]
        cells = [" / ".join(per[p][n] for p in peers) for n in sizes]
        lin = [ratio(raw[p].get(hi, 0.0), raw[p].get(lo, 0.0)) for p in peers if p != "tiktoken"]
        rows.append([kind] + cells + [" / ".join(lin)])
    linear = " / ".join(p for p in peers if p != "tiktoken")
    table(f"{name}: worst case, CPU ns per byte, one call per text ({' / '.join(peers)})",
          ["input"] + [size_label(n) for n in sizes] + [f"{size_label(hi)} / {size_label(lo)} per byte ({linear})"], rows)


def run_decode(name: str, corpora: List[str], reps: int) -> None:
    import bytepair

    enc = bytepair.get_encoding(name)
    tt = tiktoken_offline(name)
    rows = []
    for c in corpora:
        text = slices(corpus_bytes(c))[1]
        ids = tt.encode_ordinary(text)
        mb = len(text.encode()) / 1e6
        assert enc.decode(ids) == tt.decode(ids)
        ours = theirs = 0.0
        for _ in range(max(reps, 5)):
            ours = max(ours, mb / median_time(lambda: enc.decode(ids), 1))
            theirs = max(theirs, mb / median_time(lambda: tt.decode(ids), 1))
        rows.append([c, f"{ours:.0f}", f"{theirs:.0f}", f"{ours / theirs:.2f}x"])
    table(f"{name}: decode ids -> str (MB of text per second)", ["corpus", "bytepair", "tiktoken", "ratio"], rows)


def size_label(n: int) -> str:
    return f"{n // 1_000_000} MB" if n >= 1_000_000 else f"{n // 1000} KB"


def machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    return f"{model}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"


def versions(peers: List[str]) -> str:
    import bytepair

    dist = {"gigatoken": "gigatoken", "quicktok": "quicktok-v1", "tiktoken": "tiktoken", "hf": "tokenizers",
            "riptoken": "riptoken", "bpe-openai": "bpe-openai", "tokie": "tokie", "numpy": "numpy"}
    seen = {"bytepair": bytepair.__version__}
    for p in peers + ["tiktoken", "numpy"]:
        d = dist.get(p.replace("-np", ""))
        if d and d not in seen:
            seen[d] = version(d)
    return ", ".join(f"{k} {v}" for k, v in seen.items())


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="cl100k_base only, groups fresh and longlived, 1 core")
    ap.add_argument("--encodings", nargs="+", default=None, choices=ENCODINGS)
    ap.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    ap.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS + EXTRA_PEERS)
    ap.add_argument("--groups", nargs="+", default=None, choices=GROUPS)
    ap.add_argument("--cores", nargs="+", default=["1"], choices=["1", "all"],
                    help="fresh/longlived children pinned to one core (CPU time) and/or unpinned (wall time)")
    ap.add_argument("--repeat", type=int, default=5, help="repetitions of the in-process groups")
    ap.add_argument("--rounds", type=int, default=1,
                    help="fresh/longlived: processes per (peer, corpus), rounds interleaving the peers; median")
    ap.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000, 10_000_000])
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    encodings = args.encodings or (["cl100k_base"] if args.quick else ENCODINGS)
    groups = args.groups or (["fresh", "longlived"] if args.quick else GROUPS)
    print(f"machine: {machine()}")
    print(f"command: python benches/bench_encode.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"versions: {versions(args.peers)}")
    for name in encodings:
        for cores in args.cores:
            if "fresh" in groups or "longlived" in groups:
                run_fresh(name, args.corpora, args.peers, cores, "longlived" in groups, max(1, args.rounds))
        if "threads" in groups:
            run_threads(name, args.corpora, args.repeat)
        if "batch" in groups:
            run_batch(name, args.corpora, args.repeat)
        if "worst" in groups:
            run_worst(name, sorted(args.sizes), max(1, args.repeat))
        if "decode" in groups:
            run_decode(name, args.corpora, args.repeat)
    print(f"\nload at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
