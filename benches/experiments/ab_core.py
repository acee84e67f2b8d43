"""Compare builds of bytepair's extension in one process, interleaved.

On a shared VM whole phases run 30-50 % slower, so two processes timed a
minute apart can disagree by more than the change being measured. This tool
loads several builds of ``bytepair._core`` side by side (each under its own
module name), alternates them within every repetition (order reversed on odd
repetitions) and prints, besides the best MB/s of each, the median and range
of the *paired* ratios: each repetition's builds ran in the same machine
phase.

Make the builds with the tree in each state, for example::

    PROFILE=release scripts/dev-build.sh && cp python/bytepair/_core.*.so /tmp/core_base.so
    # ...change the code...
    PROFILE=release scripts/dev-build.sh && cp python/bytepair/_core.*.so /tmp/core_new.so
    python benches/experiments/ab_core.py /tmp/core_base.so /tmp/core_new.so --encoding cl100k_base \\
        --mode docs --corpora en_austen ko_prose

The first build is the baseline of the ratios. Modes: ``single`` (one
``encode_ordinary`` of the whole text), ``docs`` (one call per 1-10 KB
document), ``count`` (``count`` per document: no list built), ``batch`` /
``batch1`` (``encode_batch`` on all cores / one thread), ``count_batch`` /
``count_batch1`` (the same without lists), ``numpy_batch`` / ``numpy_batch1``
(``encode_batch_to_numpy``'s core call: flat ids, no lists), ``decode`` (``decode_bytes`` of the
text's ids; MB of text per second), ``np2`` (the same on 2 threads: one text cut
where the ids cannot change), ``pretok`` (``pretokenize_count`` of
the text with the encoding's pattern: the pre-tokenizer alone). With one build it just prints the
best MB/s per mode. Every build is timed cold (its
own piece cache emptied before each run), on the first ``--mb`` MB of each
corpus of ../shared/DATA.md, unless ``--warm`` keeps the caches (every
piece a hit: the hit path alone).
"""

from __future__ import annotations

import argparse
import gc
import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benches/
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

from bench_encode import CORPORA, corpus_bytes, data_dir, documents, slices

from bytepair import registry

# mode ratios worth reading: lists against no lists, all cores against one
MODE_PAIRS = [("docs", "count"), ("batch", "batch1"), ("count_batch", "count_batch1"), ("batch", "count_batch"),
              ("numpy_batch", "numpy_batch1"), ("np2", "np")]
MODES = ["single", "np", "np2", "pretok", "docs", "count", "batch", "batch1", "count_batch", "count_batch1", "numpy_batch",
         "numpy_batch1", "decode"]


def load_build(path: str, tag: int) -> Any:
    """Imports the extension at ``path`` as module ``abN._core``: the init
    symbol is found from the last name component, so any prefix works."""
    name = f"ab{tag}._core"
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _np_calls(core: Any) -> tuple:
    """The numpy-output calls of a build, including the numpy step: builds
    before 2026-12-01 returned bytes (``encode_to_bytes``), later ones arrays
    that numpy views without a copy (``encode_to_array``)."""
    import numpy as np

    if hasattr(core, "encode_to_array"):
        def single(text: str, threads: Any) -> object:
            return np.asarray(core.encode_to_array(text, None, None, threads))

        def batch(docs: List[str], threads: Any) -> object:
            ids, offs = core.encode_batch_to_arrays(docs, None, None, threads)
            return np.asarray(ids), np.asarray(offs)
    else:
        def single(text: str, threads: Any) -> object:
            return np.frombuffer(core.encode_to_bytes(text, None, None, threads), dtype=np.uint32)

        def batch(docs: List[str], threads: Any) -> object:
            ids, offs = core.encode_batch_to_bytes(docs, None, None, threads)
            return np.frombuffer(ids, dtype=np.uint32), np.frombuffer(offs, dtype=np.int64)
    return single, batch


def job(core: Any, mode: str, text: str, docs: List[str], module: Any = None, pattern: str = "") -> Callable[[], object]:
    np_single, np_batch = _np_calls(core)
    if mode == "decode":
        ids = core.encode_ordinary(text)
        return lambda: core.decode_bytes(ids)
    if mode == "pretok":
        return lambda: module.pretokenize_count(pattern, text)
    return {
        "single": lambda: core.encode_ordinary(text),
        "np": lambda: np_single(text, 1),
        "np2": lambda: np_single(text, 2),
        "docs": lambda: [core.encode_ordinary(d) for d in docs],
        "count": lambda: [core.count(d) for d in docs],
        "batch": lambda: core.encode_batch(docs, None, None, None),
        "batch1": lambda: core.encode_batch(docs, None, None, 1),
        "count_batch": lambda: core.count_batch(docs, None, None, None),
        "numpy_batch": lambda: np_batch(docs, None),
        "numpy_batch1": lambda: np_batch(docs, 1),
        "count_batch1": lambda: core.count_batch(docs, None, None, 1),
    }[mode]


def main(argv: List[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", help="paths of _core shared objects (copies: each at its own path); the first is the baseline")
    ap.add_argument("--encoding", default="cl100k_base")
    ap.add_argument("--mode", nargs="+", default=["docs"], choices=MODES)
    ap.add_argument("--corpora", nargs="+", default=["en_austen", "code_python", "ko_prose"], choices=CORPORA)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--warm", action="store_true",
                    help="keep every build's caches between runs (every piece a hit after the untimed first "
                         "touch): the hit path alone")
    ap.add_argument("--unseen", action="store_true",
                    help="--steady, with every build's caches wiped and warmed on the first slice again before "
                         "each timed slice, so the timed text is never seen before (bench_encode's steady cell)")
    ap.add_argument("--steady", action="store_true",
                    help="bench_encode's steady state: each build warms on the corpus's first slice (untimed), "
                         "then every timed run takes one of the next four slices in turn; caches are never "
                         "emptied (the timed text is never the one the caches warmed on); CPU time")
    args = ap.parse_args(argv)
    if args.steady or args.unseen:
        return steady_main(args)

    data = registry.read_bundled_ranks(args.encoding)
    spec = registry._spec(args.encoding)
    modules = [load_build(p, i) for i, p in enumerate(args.builds)]
    cores = [m.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern) for m in modules]
    labels = [Path(p).stem for p in args.builds]
    for corpus in args.corpora:
        raw = (data_dir() / f"{corpus}.txt").read_bytes()
        raw = (raw * (int(args.mb * 1e6) // len(raw) + 1))[: int(args.mb * 1e6)]  # repeated when shorter
        text = raw.decode("utf-8", "ignore")
        docs = documents(text)
        mb = len(text.encode()) / 1e6
        for core in cores:  # first touch of every table, outside the timings
            core.encode_ordinary(text)
        # rates[mode][build]: modes and builds interleaved in every repetition
        rates: Dict[str, Dict[int, List[float]]] = {m: {i: [] for i in range(len(cores))} for m in args.mode}
        for rep in range(args.repeat):
            order = list(range(len(cores)))
            for mode in args.mode:
                for i in order if rep % 2 == 0 else order[::-1]:
                    run = job(cores[i], mode, text, docs, modules[i], spec.pattern)
                    if not args.warm:
                        # older builds name it clear_piece_memo
                        (getattr(modules[i], "clear_piece_cache", None) or modules[i].clear_piece_memo)()
                    gc.collect()
                    t = time.perf_counter()
                    run()
                    rates[mode][i].append(mb / (time.perf_counter() - t))
        for mode in args.mode:
            r = rates[mode]
            best = " ".join(f"{labels[i]} {max(v):6.1f}" for i, v in r.items())
            paired = [f"{labels[i]}/{labels[0]} {median_range(r[i], r[0])}" for i in range(1, len(cores))]
            print(f"{corpus:14s} {mode:12s} best MB/s: {best}" + (f" | {' '.join(paired)}" if paired else ""))
        for a, b in MODE_PAIRS:
            if a in rates and b in rates:
                print(f"{corpus:14s} {a}/{b} ({labels[0]}): {median_range(rates[a][0], rates[b][0])}")
        sys.stdout.flush()


def steady_main(args: argparse.Namespace) -> None:
    data = registry.read_bundled_ranks(args.encoding)
    spec = registry._spec(args.encoding)
    modules = [load_build(p, i) for i, p in enumerate(args.builds)]
    cores = [m.CoreBPE.from_tiktoken(data, spec.specials, spec.pattern) for m in modules]
    labels = [Path(p).stem for p in args.builds]
    for corpus in args.corpora:
        parts = slices(corpus_bytes(corpus))
        docs = [documents(p) for p in parts]
        rates: Dict[str, Dict[int, List[float]]] = {m: {i: [] for i in range(len(cores))} for m in args.mode}
        for mode in args.mode:
            for i, core in enumerate(cores):
                job(core, mode, parts[0], docs[0], modules[i], spec.pattern)()
        for rep in range(args.repeat):
            k = 1 + rep % (len(parts) - 1)
            mb = len(parts[k].encode()) / 1e6
            order = list(range(len(cores)))
            for mode in args.mode:
                for i in order if rep % 2 == 0 else order[::-1]:
                    if args.unseen:
                        # bench_encode's steady cell: warm on the first slice only,
                        # so the timed slice's new pieces miss as in a fresh process
                        modules[i].clear_piece_cache()
                        job(cores[i], mode, parts[0], docs[0], modules[i], spec.pattern)()
                    run = job(cores[i], mode, parts[k], docs[k], modules[i], spec.pattern)
                    gc.collect()
                    t = time.process_time()
                    run()
                    rates[mode][i].append(mb / (time.process_time() - t))
        for mode in args.mode:
            r = rates[mode]
            best = " ".join(f"{labels[i]} {sorted(v)[len(v) // 2]:6.1f}" for i, v in r.items())
            paired = [f"{labels[i]}/{labels[0]} {median_range(r[i], r[0])}" for i in range(1, len(cores))]
            print(f"{corpus:14s} {mode:12s} steady median MB/s: {best}" + (f" | {' '.join(paired)}" if paired else ""))
        sys.stdout.flush()


def median_range(xs: List[float], ys: List[float]) -> str:
    """Median and range of the ratios of runs made in the same repetition."""
    q = sorted(x / y for x, y in zip(xs, ys))
    return f"median {q[len(q) // 2]:.3f} [{q[0]:.2f}-{q[-1]:.2f}]"

if __name__ == "__main__":
    main()
