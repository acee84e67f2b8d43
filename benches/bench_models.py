"""Open models' tokenizers on one core: per model file against the peers
(section ``models``), and per pattern (section ``patterns``).

Section ``models`` (the default): bytepair against gigatoken, HF tokenizers and
kitoken, per model file. Protocol:

* **One fresh process per (peer, model, corpus)**, started by this script
  (``--child``) and pinned to one CPU (``os.sched_setaffinity``; CPU time,
  ``time.process_time``, so other load on a shared machine counts less).
* **Text**: the first ``--mb`` MB of each corpus (``$BYTEPAIR_DATA/corpora``,
  or a text file given by its path, such as the French and German prose of
  ``benches/experiments/help_pages_text.py``), cut back to whole characters;
  the same text for every peer.
* **load**: the tokenizer built from the file (imports excluded).
* **cold**: the first encode call after the load (arrays where the peer has
  them, else lists), MB/s of that one call.
* **steady**: the same text encoded again, ``--repeat`` passes, the median
  (the lists call gets one untimed pass first: gigatoken's tiktoken layer sets
  itself up on its first call).
  Arrays (``np``: bytepair ``encode_to_numpy``, gigatoken ``Tokenizer.encode``)
  and lists (bytepair ``encode``/``encode_ordinary``, gigatoken
  ``as_tiktoken().encode(allowed_special="all")``, HF ``encode(...).ids``,
  kitoken ``encode``) are timed in the same process, arrays first.
* **fresh**: steady arrays again, each pass on a new ``str`` of the same text
  (made before the clock starts), as an application passes text it has just
  read. CPython keeps a string's UTF-8 form once asked for it, so the steady
  passes over one object get it free after the first call; a new string
  has none yet, and each peer makes it its own way (bytepair converts the
  code units itself where the CPU has AVX-512 VBMI2, else asks CPython).
* **Exactness**: every child hashes its ids for the whole text and for each
  document (blank-line separated, encoded one by one after the timing); a peer
  whose documents differ from bytepair's is shown with the count of differing
  documents. Special added tokens are read as HF reads them (the corpora hold
  none).
* **Yardstick**: bytepair's own ``cl100k_base`` on the same text (issue
  target: no model below 0.7x of it).
* A peer that cannot load a file is skipped; the reason is printed.

    python benches/bench_models.py --mb 1
    python benches/bench_models.py --models llama-3.2 qwen-2.5 --corpora en_austen --repeat 5

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
* rounds interleave every cell (``--repeat``: rounds here); a cell's figure is the median
  over rounds, its ratio the median of the per-round ratios to cl100k_base on
  the same corpus;
* exactness: each child hashes its ids; the scanner's hash must equal the
  regex engine's for the same pattern (``WRONG`` otherwise).

    PYTHONPATH=python python benches/bench_models.py --section patterns --mb 1 --repeat 3
    PYTHONPATH=python python benches/bench_models.py --section patterns --patterns llama3 qwen2 --corpora en_austen

Section ``load``: the load alone, per model file, against the reference
library's own loader: ``tokenizers.Tokenizer.from_file`` for a
``tokenizer.json``, ``mistral-common``'s ``Tekkenizer.from_file`` for
``tekken.json``, tiktoken (``load_tiktoken_bpe`` + ``Encoding``) for a rank file.
One fresh process per (peer, file, round), pinned to ``--cpu``, imports done
before the clock starts; CPU time (``time.process_time``); rounds (``--repeat``)
interleave the peers and the figure is the median over rounds.

    PYTHONPATH=python python benches/bench_models.py --section load --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench_encode.py: numpy's spinning BLAS threads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from bench_encode import ratio, table

CORPORA = ["en_austen", "en_kjv", "en_pydocs", "code_python", "ko_prose", "multi_unicode"]
PEERS = ["bytepair", "gigatoken", "hf", "kitoken"]
YARDSTICK = "bytepair-cl100k"
PATTERNS = ["cl100k", "llama3", "qwen2", "qwen35", "nemo", "o200k", "bytelevel", "deepseek_v3"]
L3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
      r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN35 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
GPT2 = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

#: model folder -> (file, kind, pattern for a rank file, gigatoken's pretokenizer for a rank file)
MODELS: Dict[str, Tuple[str, str, Optional[str], Optional[str]]] = {
    **{m: ("tokenizer.json", "json", None, None) for m in [
        "llama-3.2", "qwen-2.5", "qwen-3.5", "qwen2-gpt2files", "deepseek-v3", "deepseek-v4",
        "deepseek-llm-7b", "deepseek-coder-33b", "glm-4-0414", "glm-4.7-flash", "minimax-text-01",
        "gpt-neox-20b", "olmo-1", "olmo-2", "claude-v1"]},
    "llama-3.2-rank": ("tokenizer.model", "rank", L3, "cl100k"),
    "qwen3.6-tiktoken": ("qwen3_6.tiktoken", "rank", QWEN35, "qwen35"),
    "whisper-multilingual": ("multilingual.tiktoken", "rank", GPT2, "gpt2"),
    "mistral-tekken": ("tekken.json", "tekken", None, None),
    "mistral-tekken-240911": ("tekken.json", "tekken", None, None),
}

Encode = Callable[[str], Any]


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA") or Path.home() / ".cache" / "bytepair-data")


def model_path(model: str) -> Path:
    folder = model.removesuffix("-rank")
    return data_dir() / "models" / folder / MODELS[model][0]


def corpus_file(name: str) -> Path:
    """A corpus by name (``$BYTEPAIR_DATA/corpora``), or any text file by path."""
    return Path(name) if "/" in name else data_dir() / "corpora" / f"{name}.txt"


def corpus_label(name: str) -> str:
    return Path(name).stem if "/" in name else name


def corpus_text(name: str, mb: float) -> str:
    raw = corpus_file(name).read_bytes()
    return raw[: int(mb * 1_000_000)].decode("utf-8", "ignore")


# ---------------------------------------------------------------- peers


def load_bytepair(model: str) -> Tuple[Optional[Encode], Encode, str]:
    """(arrays call or None, lists call, the loaded class's name)."""
    import bytepair

    if model == YARDSTICK:
        enc = bytepair.get_encoding("cl100k_base")
        return enc.encode_to_numpy, enc.encode_ordinary, type(enc).__name__
    _, kind, pattern, _ = MODELS[model]
    if kind == "rank":
        tok = bytepair.load(model_path(model), pattern=pattern, special_tokens={})
    else:
        tok = bytepair.load(model_path(model))
    name = type(tok).__name__
    # a PipelineTokenizer's encode reads added tokens as HF's encode does; a rank Tokenizer's
    # encode_ordinary is tiktoken's (and mistral-common's) call
    lists = tok.encode if name == "PipelineTokenizer" else tok.encode_ordinary
    arrays = getattr(tok, "encode_to_numpy", None)
    return arrays, lists, name


def load_peer(peer: str, model: str) -> Tuple[Optional[Encode], Optional[Encode], str]:
    """Builds the tokenizer (timed as the load) and returns (arrays, lists, note)."""
    if peer in ("bytepair", YARDSTICK):
        return load_bytepair(YARDSTICK if peer == YARDSTICK else model)
    _, kind, _, giga_pretok = MODELS[model]
    path = model_path(model)
    if peer == "gigatoken":
        import gigatoken

        if kind == "json":
            gt = gigatoken.Tokenizer.from_json(path.read_text(encoding="utf-8"))
        elif kind == "rank":
            gt = gigatoken.Tokenizer.from_tiktoken(str(path), pretokenizer=giga_pretok)
        else:
            raise NotImplementedError("gigatoken 0.10.0 has no tekken.json loader")
        compat = gt.as_tiktoken()
        return gt.encode, lambda t: compat.encode(t, allowed_special="all"), ""
    if peer == "hf":
        from tokenizers import Tokenizer

        if kind != "json":
            raise NotImplementedError(f"tokenizers reads only tokenizer.json, not {path.name}")
        hf = Tokenizer.from_file(str(path))
        return None, lambda t: hf.encode(t, add_special_tokens=False).ids, ""
    if peer == "kitoken":
        import kitoken

        kt = kitoken.Kitoken.from_file(str(path))
        return None, kt.encode, ""
    raise ValueError(peer)


def import_peer(peer: str) -> None:
    mods = {"bytepair": ["bytepair"], YARDSTICK: ["bytepair"], "gigatoken": ["gigatoken"],
            "hf": ["tokenizers"], "kitoken": ["kitoken"]}
    for m in mods[peer] + ["numpy"]:
        __import__(m)


def ids_hash(ids: Any) -> str:
    import numpy as np

    return hashlib.blake2b(np.asarray(ids, dtype=np.uint32).tobytes(), digest_size=12).hexdigest()


# ---------------------------------------------------------------- child


def timed(f: Encode, text: str) -> Tuple[float, Any]:
    t = time.process_time()
    r = f(text)
    return time.process_time() - t, r


def child(job: Dict[str, Any]) -> Dict[str, Any]:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {job["cpu"]})
    text = corpus_text(job["corpus"], job["mb"])
    mb = len(text.encode()) / 1e6
    docs = [d for d in text.split("\n\n") if d]
    import_peer(job["peer"])
    gc.collect()
    t0 = time.process_time()
    arrays, lists, note = load_peer(job["peer"], job["model"])
    out: Dict[str, Any] = {"load_s": time.process_time() - t0, "mb": mb, "note": note}
    first = arrays or lists
    assert first is not None
    t, r = timed(first, text)
    out["cold_s"], out["hash"], out["len"] = t, ids_hash(r), len(r)
    del r
    for key, f in (("np", arrays), ("list", lists)):
        if f is None:
            continue
        if f is not first:  # a warm pass first: a call's one-time setup is not steady work
            f(text)
        times = []
        for _ in range(job["repeat"]):
            t, r = timed(f, text)
            times.append(t)
            if ids_hash(r) != out["hash"]:
                out[f"{key}_differs"] = True
            del r
        out[f"{key}_s"] = statistics.median(times)
    if arrays is not None:
        # new objects equal to `text`, none of which CPython has converted yet
        copies = [text[:1] + text[1:] for _ in range(job["repeat"])]
        out["fresh_s"] = statistics.median(timed(arrays, c)[0] for c in copies)
        del copies
    out["docs"] = [ids_hash(lists(d)) for d in docs] if lists else []
    return out


def run_child(job: Dict[str, Any]) -> Tuple[Optional[Dict[str, Any]], str]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(job)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
        err = next((x for x in reversed(lines) if "Error" in x or "Exception" in x), lines[-1] if lines else "?")
        return None, err.strip()[:160]
    return json.loads(r.stdout.strip().splitlines()[-1]), ""


# ---------------------------------------------------------------- table


def fmt(v: float) -> str:
    return "-" if not v else f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def rate(res: Optional[Dict[str, Any]], key: str) -> float:
    if not res or not res.get(key):
        return 0.0
    return res["mb"] / res[key]


def mismatch(res: Optional[Dict[str, Any]], ref: Optional[Dict[str, Any]]) -> str:
    """Documents whose ids differ from bytepair's, or '-' when either is missing."""
    if not res or not ref:
        return "-"
    n = sum(a != b for a, b in zip(res["docs"], ref["docs"])) + abs(len(res["docs"]) - len(ref["docs"]))
    whole = "" if res["hash"] == ref["hash"] else " (whole text differs)"
    inner = " (repeat passes differ)" if res.get("np_differs") or res.get("list_differs") else ""
    return f"{n}{whole}{inner}"


def machine() -> str:
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((x.split(":", 1)[1].strip() for x in f if x.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    import bytepair

    out = [f"bytepair {bytepair.__version__}"]
    for d in ("gigatoken", "tokenizers", "kitoken", "numpy"):
        try:
            out.append(f"{d} {version(d)}")
        except PackageNotFoundError:
            out.append(f"{d} not installed")
    return ", ".join(out)


def row(model: str, corpus: str, res: Dict[str, Optional[Dict[str, Any]]], yard: float) -> List[str]:
    """The steady row: MB/s per peer and API, ratios, differing documents."""
    bp = res.get("bytepair")
    bp_np, bp_list = rate(bp, "np_s"), rate(bp, "list_s")
    note = (bp or {}).get("note", "") or "fails"
    g, hf, kt = res.get("gigatoken"), res.get("hf"), res.get("kitoken")
    cells = [model, corpus, note, fmt(bp_np), fmt(bp_list), fmt(rate(g, "np_s")), fmt(rate(g, "list_s")),
             fmt(rate(hf, "list_s")), fmt(rate(kt, "list_s"))]
    bp_fresh, g_fresh = rate(bp, "fresh_s"), rate(g, "fresh_s")
    cells += [fmt(bp_fresh), fmt(g_fresh), ratio(bp_fresh, g_fresh)]
    cells += [ratio(bp_np, rate(g, "np_s")), ratio(bp_list, rate(g, "list_s")), ratio(bp_np, rate(hf, "list_s")),
              ratio(bp_list, rate(kt, "list_s")), ratio(bp_np, yard)]
    n_docs = len(bp["docs"]) if bp else 0
    cells += [", ".join(mismatch(res.get(p), bp) for p in ("gigatoken", "hf", "kitoken")) + f" of {n_docs}"]
    return cells


HEADER = ["model", "corpus", "bytepair class", "bp np", "bp list", "giga np", "giga list", "HF list",
          "kitoken list", "bp np fresh", "giga np fresh", "bp/giga np fresh", "bp/giga np", "bp/giga list",
          "bp np/HF", "bp list/kitoken", "bp np/own cl100k", "docs differing from bytepair: giga, HF, kitoken"]
COLD_HEADER = ["model", "corpus", "bytepair", "gigatoken", "HF", "kitoken", "bp/giga", "bp/HF", "bp/kitoken",
               "bp/own cl100k"]


def cold_row(model: str, corpus: str, res: Dict[str, Optional[Dict[str, Any]]], yard: float) -> List[str]:
    """The cold row: MB/s of each peer's first call after its load."""
    r = [rate(res.get(p), "cold_s") for p in PEERS]
    return [model, corpus] + [fmt(v) for v in r] + [ratio(r[0], v) for v in r[1:]] + [ratio(r[0], yard)]


def load_row(model: str, res: Dict[str, Optional[Dict[str, Any]]]) -> List[str]:
    def s(p: str) -> str:
        r = res.get(p)
        return f"{r['load_s']:.2f}" if r else "-"

    bp, hf = res.get("bytepair"), res.get("hf")
    return [model, MODELS[model][0], s("bytepair"), s("hf"), s("gigatoken"), s("kitoken"),
            ratio(hf["load_s"], bp["load_s"]) if bp and hf else "-"]


def run(models: List[str], corpora: List[str], mb: float, repeat: int, cpu: int) -> None:
    rows, colds = [], []
    first: Dict[str, Dict[str, Optional[Dict[str, Any]]]] = {}
    for c in corpora:
        job = {"peer": YARDSTICK, "model": YARDSTICK, "corpus": c, "mb": mb, "repeat": repeat, "cpu": cpu}
        yres, why = run_child(job)
        if yres is None:
            print(f"  {YARDSTICK} {c}: failed ({why})", file=sys.stderr)
        yard, yard_cold = rate(yres, "np_s"), rate(yres, "cold_s")
        for m in models:
            res: Dict[str, Optional[Dict[str, Any]]] = {}
            for p in PEERS:
                r, why = run_child({**job, "peer": p, "model": m})
                res[p] = r
                if r is None:
                    print(f"  skip {p} on {m} ({c}): {why}", file=sys.stderr)
            first.setdefault(m, res)
            rows.append(row(m, corpus_label(c), res, yard))
            colds.append(cold_row(m, corpus_label(c), res, yard_cold))
            print(f"  done {m} {c}", file=sys.stderr)
        yrow = [YARDSTICK, corpus_label(c), "Tokenizer", fmt(yard), fmt(rate(yres, "list_s"))] + ["-"] * (len(HEADER) - 5)
        yrow[HEADER.index("bp np fresh")] = fmt(rate(yres, "fresh_s"))
        rows.append(yrow)
        colds.append([YARDSTICK, corpus_label(c), fmt(yard_cold)] + ["-"] * (len(COLD_HEADER) - 3))
    table(f"steady encode, MB/s, one core (CPU time), first {mb:g} MB of each corpus, median of {repeat} "
          "passes over the same text", HEADER, rows)
    table("cold encode: the first call after the load (arrays where the peer has them), MB/s",
          COLD_HEADER, colds)
    table("load, CPU seconds, one core (the first corpus's processes)",
          ["model", "file", "bytepair", "HF from_file", "gigatoken", "kitoken", "HF / bytepair"],
          [load_row(m, first[m]) for m in models])


# ---------------------------------------------------------------- section load

LOAD_REFERENCE = {"json": "tokenizers", "tekken": "mistral-common", "rank": "tiktoken"}


def load_child(peer: str, model: str, cpu: int) -> Dict[str, Any]:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    _, kind, pattern, _ = MODELS[model]
    path = model_path(model)
    if peer == "bytepair":
        import bytepair

        def build() -> Any:
            if kind == "rank":
                return bytepair.load(path, pattern=pattern, special_tokens={})
            return bytepair.load(path)
    elif kind == "json":
        from tokenizers import Tokenizer

        def build() -> Any:
            return Tokenizer.from_file(str(path))
    elif kind == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer

        def build() -> Any:
            return Tekkenizer.from_file(str(path))
    else:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        def build() -> Any:
            return tiktoken.Encoding(model, pat_str=pattern, mergeable_ranks=load_tiktoken_bpe(str(path)),
                                     special_tokens={})
    gc.collect()
    t0 = time.process_time()
    tok = build()
    out = {"load_s": time.process_time() - t0, "class": type(tok).__name__}
    return out


def run_load(models: List[str], repeat: int, cpu: int) -> None:
    cells: Dict[Tuple[str, str], List[float]] = {}
    classes: Dict[str, str] = {}
    for _ in range(repeat):
        for m in models:
            for peer in ("bytepair", "reference"):
                job = {"section": "load", "peer": peer, "model": m, "cpu": cpu}
                r, why = run_child(job)
                if r is None:
                    print(f"  {peer} on {m}: failed ({why})", file=sys.stderr)
                    continue
                cells.setdefault((m, peer), []).append(r["load_s"])
                if peer == "bytepair":
                    classes[m] = r["class"]
    rows = []
    for m in models:
        bp, ref = cells.get((m, "bytepair")), cells.get((m, "reference"))
        b = statistics.median(bp) if bp else 0.0
        f = statistics.median(ref) if ref else 0.0
        rows.append([m, MODELS[m][0], classes.get(m, "fails"), f"{b:.3f}" if bp else "-",
                     LOAD_REFERENCE[MODELS[m][1]], f"{f:.3f}" if ref else "-", ratio(b, f)])
    table(f"load, CPU seconds, one core, median of {repeat} rounds",
          ["model", "file", "bytepair class", "bytepair", "reference", "reference", "bytepair / reference"],
          rows)


# ---------------------------------------------------------------- section patterns


def slices(corpus: str, mb: float, n: int = 5) -> List[str]:
    data = corpus_file(corpus).read_bytes()
    size = min(int(mb * 1e6), len(data) // n)
    out = []
    for k in range(n):
        out.append(data[k * size:(k + 1) * size].decode("utf-8", errors="ignore"))
    return out


def pattern_child(corpus: str, pattern_name: str, engine: str, mb: float) -> Dict[str, Any]:
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


def run_pattern_child(corpus: str, pattern: str, engine: str, mb: float) -> Dict[str, Any]:
    job = {"section": "patterns", "corpus": corpus, "pattern": pattern, "engine": engine, "mb": mb}
    cmd = ["taskset", "-c", "0", sys.executable, __file__, "--child", json.dumps(job)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_patterns(args: argparse.Namespace) -> None:
    import bytepair

    pats = ["cl100k"] + [p for p in args.patterns if p != "cl100k"]
    engines = ["scanner"] if args.no_regex else ["scanner", "regex"]
    print(f"# {' '.join(sys.argv)}")
    print(f"# bytepair {bytepair.__version__}; {platform.machine()} {platform.processor() or ''}; "
          f"{os.cpu_count()} cores; load {os.getloadavg()[0]:.1f}; one core (taskset -c 0), CPU time, "
          f"median of slices 2-5 of {args.mb} MB, median of {args.repeat} rounds")
    cells: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = {}
    for _ in range(args.repeat):
        for corpus in args.corpora:
            for pat in pats:
                for engine in engines:
                    if engine == "regex" and pat in ("cl100k", "deepseek_v3"):
                        continue
                    r = run_pattern_child(corpus, pat, engine, args.mb)
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



def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--section", choices=["models", "patterns", "load"], default="models")
    ap.add_argument("--patterns", nargs="+", default=PATTERNS, choices=PATTERNS, help="section patterns")
    ap.add_argument("--no-regex", action="store_true", help="section patterns: skip the fancy-regex engine column")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--corpora", nargs="+", default=CORPORA,
                    help=f"corpus names ({', '.join(CORPORA)}) or paths of text files (section models)")
    ap.add_argument("--mb", type=float, default=1.0, help="MB of each corpus (from its start), 0.01..100")
    ap.add_argument("--repeat", type=int, default=3,
                    help="models: steady passes per process; patterns: interleaved rounds; 1..50 (median)")
    ap.add_argument("--cpu", type=int, default=0, help="the CPU every child is pinned to")
    args = ap.parse_args(argv)
    if args.child:
        job = json.loads(args.child)
        if job.get("section") == "patterns":
            print(json.dumps(pattern_child(job["corpus"], job["pattern"], job["engine"], job["mb"])))
        elif job.get("section") == "load":
            print(json.dumps(load_child(job["peer"], job["model"], job["cpu"])))
        else:
            print(json.dumps(child(job)))
        return
    if not 0.01 <= args.mb <= 100 or not 1 <= args.repeat <= 50 or not 0 <= args.cpu < (os.cpu_count() or 1):
        ap.error("--mb must be 0.01..100, --repeat 1..50, --cpu a CPU of this machine")
    unknown = [c for c in args.corpora if not corpus_file(c).is_file() and ("/" in c or c not in CORPORA)]
    if unknown:
        ap.error(f"no corpus {unknown[0]!r}: a name of {', '.join(CORPORA)} or the path of a text file")
    if args.section == "patterns":
        run_patterns(args)
        return
    if args.section == "load":
        print(f"machine: {machine()}")
        print(f"command: python benches/bench_models.py {' '.join(argv if argv is not None else sys.argv[1:])}")
        print(f"versions: {versions()}, mistral-common {_version('mistral-common')}, tiktoken {_version('tiktoken')}")
        run_load(args.models, args.repeat, args.cpu)
        print(f"\nload at end: {os.getloadavg()[0]:.1f}")
        return
    print(f"machine: {machine()}")
    print(f"command: python benches/bench_models.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"versions: {versions()}")
    run(args.models, args.corpora, args.mb, args.repeat, args.cpu)
    print(f"\nload at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
