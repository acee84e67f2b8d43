"""Encoding benchmark: bytepair against tiktoken, Hugging Face ``tokenizers``
(built from the same ranks) and the fast exact peers on PyPI (quicktok,
riptoken, bpe-openai, tokie), in one process, peers interleaved.

Every peer's ids are checked against tiktoken's; a peer that differs anywhere is
marked WRONG and never counts as "fastest exact peer". Throughput is MB of UTF-8
input per second (best of ``--repeat`` runs); the ratio columns are bytepair's
throughput over the fastest exact peer's.

State: no peer is reset between runs, so a peer with a cache of pieces (tokie's
pretoken cache, quicktok's, Hugging Face's word cache) is timed with that cache
holding the timed text (the exactness check and earlier repetitions ran over
it). ``bytepair`` is timed cold: its per-thread piece memo is emptied before
every run. ``bytepair-warm`` (with ``--peers ... bytepair-warm``) keeps its memo
like the peers keep their caches: the timed call is repeated once, untimed,
right before each timed run. "warm / fastest" is the comparison in equal state,
"cold / fastest" the conservative one.

Groups:
  single   one big string per corpus, ``encode_ordinary`` on one thread
  docs     the corpus cut into 1-10 KB documents, one ``encode_ordinary`` call each
  batch    the same documents in one batch call (all cores; bytepair also 1 thread)
  worst    'x'*N, N spaces, random base64, one long Korean word, N = 10 KB .. 10 MB
  decode   ids -> str on the big string

Data: ``$BYTEPAIR_DATA/corpora`` (default ``~/.cache/bytepair-data``), see DATA.md.

    python benches/bench_encode.py --quick                 # a few minutes
    python benches/bench_encode.py --encodings cl100k_base --corpora en_austen ko_prose
"""

from __future__ import annotations

import argparse
import base64
import gc
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import bytepair
from bytepair import reference, registry

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
PEERS = ["bytepair", "tiktoken", "hf", "quicktok", "riptoken", "bpe-openai", "tokie"]
EXTRA_PEERS = ["bytepair-warm"]

#: peer -> callable run (untimed) before each timed run, given the timed call
PREPARE: Dict[str, Callable[[Callable[[], object]], object]] = {}

Encode = Callable[[str], List[int]]
Batch = Callable[[List[str]], List[List[int]]]


# ---------------------------------------------------------------- peers


def tiktoken_offline(name: str):
    import tiktoken

    enc = bytepair.get_encoding(name)
    ranks = {}
    for line in registry.read_bundled_ranks(name).splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return tiktoken.Encoding(name=f"{name}-offline", pat_str=enc.pattern, mergeable_ranks=ranks,
                             special_tokens=enc.special_tokens)


def hf_from_ranks(name: str):
    """Hugging Face tokenizers built from the same ranks (DATA.md's recipe)."""
    from tokenizers import Regex, decoders, models, pre_tokenizers
    from tokenizers import Tokenizer as HFTokenizer

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


def make_peer(peer: str, name: str, tt) -> Optional[Tuple[Encode, Optional[Batch], str]]:
    """(encode_ordinary, batch or None, version) or None when unavailable."""
    if peer in ("bytepair", "bytepair-warm"):
        # "bytepair": cold, the per-thread piece memo is emptied before every timed
        # run, so repeats over the same text are not all memo hits (conservative).
        # "bytepair-warm": the memo is kept, as the peers keep their caches; the
        # timed call runs once untimed first (the cold runs in between empty it)
        enc = bytepair.get_encoding(name)

        def prepare(call: Callable[[], object]) -> None:
            if peer == "bytepair-warm":
                call()
            else:
                bytepair._core.clear_piece_memo()

        PREPARE[peer] = prepare
        return enc.encode_ordinary, enc.encode_ordinary_batch, bytepair.__version__
    if peer == "tiktoken":
        import tiktoken

        return tt.encode_ordinary, lambda ts: tt.encode_ordinary_batch(ts, num_threads=os.cpu_count() or 2), tiktoken.__version__
    if peer == "hf":
        import tokenizers

        hf = hf_from_ranks(name)
        return ((lambda t: hf.encode(t, add_special_tokens=False).ids),
                (lambda ts: [e.ids for e in hf.encode_batch(ts, add_special_tokens=False)]), tokenizers.__version__)
    if peer == "quicktok":
        import quicktok

        q = quicktok.get_encoding(name)

        def qbatch(ts):
            toks, offs = q.encode_batch(ts)
            toks, offs = list(toks), list(offs)
            return [toks[offs[i]:offs[i + 1]] for i in range(len(ts))]

        return q.encode_ordinary, qbatch, _version("quicktok-v1")
    if peer == "riptoken":
        import riptoken

        r = riptoken._build_encoding(tt)
        return r.encode_ordinary, r.encode_ordinary_batch, _version("riptoken")
    if peer == "bpe-openai":
        import bpe_openai

        b = bpe_openai.build_encoding_from_name(name)
        return b.encode_ordinary, b.encode_ordinary_batch, _version("bpe-openai")
    if peer == "tokie":
        import tempfile

        import tokie

        hf = hf_from_ranks(name)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "tokenizer.json")
            hf.save(path)
            tk = tokie.Tokenizer.from_json(path)

        def tbatch(ts):
            return [list(e.ids) for e in tk.encode_batch(ts)]

        return (lambda t: list(tk.encode(t).ids)), tbatch, _version("tokie")
    raise ValueError(peer)


def _version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001  (metadata missing: report unknown)
        return "?"


# ---------------------------------------------------------------- data


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


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
    rng = random.Random(seed)
    if kind == "x":
        return "x" * n
    if kind == "spaces":
        return " " * n
    if kind == "base64":
        return base64.b64encode(rng.randbytes(n * 3 // 4 + 3)).decode()[:n]
    if kind == "korean":  # one word of random Hangul syllables (3 bytes each)
        return "".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(n // 3))
    raise ValueError(kind)


# ---------------------------------------------------------------- timing


def each(encode: Encode) -> Callable[[List[str]], List[List[int]]]:
    """One call per text: how the documents and worst-case groups are timed."""
    return lambda texts: [encode(t) for t in texts]


def best_time(fn, arg, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn(arg)
        best = min(best, time.perf_counter() - t)
    return best


def rate(mb: float, fn, arg) -> float:
    """MB/s of one run, 0.0 when the peer fails on this input (e.g. bpe-openai
    refuses inputs it deems too long; tiktoken can panic)."""
    try:
        return mb / best_time(fn, arg, 1)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return 0.0


def check(fn, arg, want) -> bool:
    try:
        got = fn(arg)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return False
    return [list(x) for x in got] == want if isinstance(want[0] if want else None, list) else list(got) == want


def table(title: str, header: List[str], rows: List[List[str]]) -> None:
    print(f"\n#### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    sys.stdout.flush()


def run_throughput(name, corpora, peers, tt, repeat, groups):
    built = {}
    for p in peers:
        try:
            built[p] = make_peer(p, name, tt)
        except Exception as e:  # noqa: BLE001  (peer missing or cannot load this encoding)
            print(f"  [{name}] {p}: unavailable ({type(e).__name__}: {str(e)[:80]})", file=sys.stderr)
    rows_single, rows_docs, rows_batch = [], [], []
    for cname, text in corpora.items():
        mb = len(text.encode()) / 1e6
        docs = documents(text)
        want = tt.encode_ordinary(text)
        want_docs = tt.encode_ordinary_batch(docs)
        # exactness per group: a peer may be exact on documents but fail on one big string
        exact_s = {p: check(f, text, want) for p, (f, b, _) in built.items()}
        exact_d = {p: check(lambda ts, f=f: [f(t) for t in ts], docs, want_docs) for p, (f, b, _) in built.items()}
        exact_b = {p: check(b, docs, want_docs) if b else False for p, (f, b, _) in built.items()}
        res_s: Dict[str, float] = {p: 0.0 for p in built}
        res_d: Dict[str, float] = {p: 0.0 for p in built}
        res_b: Dict[str, float] = {p: 0.0 for p in built}
        for _ in range(repeat):  # interleave peers
            for p, (f, b, _) in built.items():
                prep = PREPARE.get(p, lambda call: None)
                if "single" in groups:
                    prep(lambda f=f: f(text))
                    res_s[p] = max(res_s[p], rate(mb, f, text))
                if "docs" in groups:
                    prep(lambda f=f: each(f)(docs))
                    res_d[p] = max(res_d[p], rate(mb, each(f), docs))
                if "batch" in groups and b is not None:
                    prep(lambda b=b: b(docs))
                    res_b[p] = max(res_b[p], rate(mb, b, docs))
            if "batch" in groups:
                for p in ("bytepair", "bytepair-warm"):
                    if p not in built:
                        continue
                    one = built[p][1]
                    assert one is not None

                    def one_thread(ds, one=one):
                        return one(ds, num_threads=1)

                    PREPARE[p](lambda one_thread=one_thread: one_thread(docs))
                    key = f"{p} 1 thread"
                    res_b[key] = max(res_b.get(key, 0.0), mb / best_time(one_thread, docs, 1))
        for group, res, rows, exact in (("single", res_s, rows_single, exact_s), ("docs", res_d, rows_docs, exact_d),
                                        ("batch", res_b, rows_batch, exact_b)):
            if group not in groups:
                continue
            fastest = max((v for p, v in res.items() if exact.get(p, False) and not p.startswith("bytepair")),
                          default=0.0)
            row = [cname, f"{mb:.1f}"]
            extra = [p + " 1 thread" for p in ("bytepair", "bytepair-warm") if p in built] if group == "batch" else []
            for p in list(built) + extra:
                v = res.get(p, 0.0)
                mark = "" if exact.get(p, True) else " WRONG"
                row.append(f"{v:.1f}{mark}" if v else "fails")
            for p in ("bytepair", "bytepair-warm"):
                if p in built:
                    row.append(f"{res[p] / fastest:.2f}x" if fastest and res.get(p) else "-")
            if group == "batch":
                for p in ("bytepair", "bytepair-warm"):
                    if p in built:
                        one = res.get(p + " 1 thread", 0.0)
                        row.append(f"{res[p] / one:.2f}x" if one and res.get(p) else "-")
            rows.append(row)
    cols = ["corpus", "MB"] + list(built)
    states = [("cold" if p == "bytepair" else "warm") for p in ("bytepair", "bytepair-warm") if p in built]
    ratios = [f"{st} / fastest exact" for st in states]
    if "single" in groups:
        table(f"{name}: one big string, one thread (MB/s)", cols + ratios, rows_single)
    if "docs" in groups:
        table(f"{name}: 1-10 KB documents, one call each, one thread (MB/s)", cols + ratios, rows_docs)
    if "batch" in groups:
        ones = [f"{p} 1 thread" for p in ("bytepair", "bytepair-warm") if p in built]
        table(f"{name}: 1-10 KB documents, one batch call, all cores (MB/s)",
              cols + ones + ratios + [f"{st} batch / 1 thread" for st in states], rows_batch)
    return built


def run_worst(name, tt, sizes, repeat):
    """ns per byte on hostile inputs. Each size is timed over about as many
    bytes as the largest size (capped at 1 MB for the small ones): several
    distinct texts of that size (different random seeds), encoded one call
    each. Timing one small text over and over would leave its part of the
    vocabulary hot in the CPU caches and flatter the small sizes."""
    enc = bytepair.get_encoding(name)
    rows = []
    for kind in ("x", "spaces", "base64", "korean"):
        per_byte = {}
        tt_per_byte = {}
        for n in sizes:
            count = max(1, min(100, min(sizes[-1], 1_000_000) // n))
            texts = [hostile(kind, n, seed=k) for k in range(count)]
            nb = sum(len(t.encode()) for t in texts)
            reps = repeat if n * count <= 1_000_000 else 1
            bytepair._core.clear_piece_memo()  # cold, as in the throughput groups
            per_byte[n] = best_time(each(enc.encode_ordinary), texts, reps) / nb * 1e9
            try:  # tiktoken overflows its stack on some long runs (PanicException)
                if n <= 1_000_000:
                    ok = all(tt.encode_ordinary(t) == enc.encode_ordinary(t) for t in texts)
                    tt_per_byte[n] = (best_time(each(tt.encode_ordinary), texts, reps) / nb * 1e9, ok)
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                tt_per_byte[n] = (None, type(e).__name__)
        lo, hi = sizes[0], sizes[-1]
        cells = []
        for n in sizes:
            t = tt_per_byte.get(n)
            tcell = "-" if t is None else (f"{t[0]:.1f}" + ("" if t[1] is True else " WRONG") if t[0] else t[1])
            cells.append(f"{per_byte[n]:.1f} / {tcell}")
        rows.append([kind] + cells + [f"{per_byte[hi] / per_byte[lo]:.2f}"])
    table(f"{name}: worst case, ns per byte (bytepair / tiktoken; '-' = not run)",
          ["input"] + [_size(n) for n in sizes] + [f"{_size(sizes[-1])} / {_size(sizes[0])}"], rows)


def run_decode(name, corpora, tt, repeat):
    enc = bytepair.get_encoding(name)
    rows = []
    for cname, text in corpora.items():
        ids = tt.encode_ordinary(text)
        mb = len(text.encode()) / 1e6
        assert enc.decode(ids) == tt.decode(ids)
        ours = theirs = 0.0
        for _ in range(max(repeat, 5)):
            ours = max(ours, mb / best_time(enc.decode, ids, 1))
            theirs = max(theirs, mb / best_time(tt.decode, ids, 1))
        rows.append([cname, f"{ours:.0f}", f"{theirs:.0f}", f"{ours / theirs:.2f}x"])
    table(f"{name}: decode ids -> str (MB of text per second)", ["corpus", "bytepair", "tiktoken", "ratio"], rows)


def _size(n: int) -> str:
    return f"{n // 1_000_000} MB" if n >= 1_000_000 else f"{n // 1000} KB"


def machine() -> str:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        model = next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Model name")), "?")
    except OSError:
        model = platform.processor() or "?"
    return f"{model}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 MB per corpus, 2 repeats, worst case to 1 MB")
    ap.add_argument("--encodings", nargs="+", default=ENCODINGS, choices=ENCODINGS)
    ap.add_argument("--corpora", nargs="+", default=CORPORA, choices=CORPORA)
    ap.add_argument("--peers", nargs="+", default=PEERS, choices=PEERS + EXTRA_PEERS)
    ap.add_argument("--groups", nargs="+", default=["single", "docs", "batch", "worst", "decode"],
                    choices=["single", "docs", "batch", "worst", "decode"])
    ap.add_argument("--mb", type=float, default=None, help="MB taken from each corpus (default: all, or 1 with --quick)")
    ap.add_argument("--repeat", type=int, default=None)
    args = ap.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 3)
    limit = args.mb if args.mb is not None else (1.0 if args.quick else None)
    sizes = [10_000, 100_000, 1_000_000] if args.quick else [10_000, 100_000, 1_000_000, 10_000_000]

    print(f"machine: {machine()}")
    print(f"command: python benches/bench_encode.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    corpora = {}
    for c in args.corpora:
        text = (data_dir() / f"{c}.txt").read_text(encoding="utf-8")
        if limit:
            raw = text.encode()
            text = raw[: int(limit * 1e6)].decode("utf-8", "ignore")
        corpora[c] = text
    versions_done = False
    for name in args.encodings:
        tt = tiktoken_offline(name)
        built = {}
        if {"single", "docs", "batch"} & set(args.groups):
            built = run_throughput(name, corpora, args.peers, tt, repeat,
                                   set(args.groups) & {"single", "docs", "batch"})
        if built and not versions_done:
            print("\nversions: " + ", ".join(f"{p} {v[2]}" for p, v in built.items()))
            versions_done = True
        if "worst" in args.groups:
            run_worst(name, tt, sizes, repeat)
        if "decode" in args.groups:
            run_decode(name, corpora, tt, repeat)


if __name__ == "__main__":
    main()
