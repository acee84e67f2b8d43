"""Per-file overhead of training input: N small files against the same bytes
in one file.

Protocol: the real corpora (``$BYTEPAIR_DATA/corpora/*.txt``, all six in
name order by default) are joined, repeated as needed, and cut into N files
of about ``--size`` bytes (cut at character boundaries, each file one
document), ``--per-folder`` files to a folder, in a temporary directory that
the benchmark creates and deletes; the same bytes are joined into one file.
Each case runs in a fresh process, ``--repeats`` times (alternating many /
one); the median wall time is reported with the peak RSS of that process,
the ratio many / one and the overhead per file, and for ``count`` the same
of the CPU time (user and system, every thread), which other jobs on the
machine move less than the wall time.

Stages:

* ``count`` (default): ``bytepair.counts.count_chunks`` on the folder and on
  the file, timed inside the child (after imports): the part of training that
  files change (merging never sees them).
* ``train``: ``bytepair train PATH --vocab-size V -o OUT`` through the real
  executable, progress on (into a pipe), the whole process timed: outputs
  checked against inputs, the progress total, counting and merging.

    python benches/bench_many_files.py                          # 4,000 files of 1.1 KB
    python benches/bench_many_files.py --files 100000 1000000   # the 10^6 target
    python benches/bench_many_files.py --stage train --files 100000
    python benches/bench_many_files.py --builds before=/tmp/old/python after=python   # an A/B

The page cache is warm (the files were just written): what is measured is
the per-file work (system calls, Python), not the disk.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data")) / "corpora"


def peak_rss_mb() -> float:
    """This process's peak RSS since it started its program (``VmHWM``: the
    ``ru_maxrss`` of a child would count the parent's pages before ``exec``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(path: str, pattern: str) -> None:
    from bytepair.counts import count_chunks

    t, c = time.perf_counter(), os.times()
    counts = count_chunks([Path(path)], pattern=pattern)
    wall, c2 = time.perf_counter() - t, os.times()
    cpu = c2.user - c.user + c2.system - c.system
    print(f"{wall:.6f} {len(counts)} {peak_rss_mb():.1f} {cpu:.3f}")


def child_train(argv: list[str]) -> None:
    """``bytepair train`` in this process (the same code the executable runs), then the peak RSS."""
    from bytepair.cli import main as cli

    try:
        code = cli(["train", *argv])
    finally:
        print(f"\n{peak_rss_mb():.1f}", flush=True)
    if code:
        raise SystemExit(code)


def _run(cmd: list[str], cwd: Path, pythonpath: str | None) -> tuple[str, float]:
    """Runs ``cmd``: its stdout and wall seconds."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, cwd=cwd, text=True, env=env, check=False)
    wall = time.perf_counter() - t
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout, wall


def run(stage: str, path: Path, args: argparse.Namespace, work: Path,
        build: str | None) -> tuple[float, float, str, float]:
    """One case in a fresh process (``build``: its PYTHONPATH): (seconds, peak RSS MB, what it found,
    CPU seconds of the counting: user and system, every thread; NaN for ``train``)."""
    if stage == "count":
        out, _ = _run([sys.executable, str(Path(__file__).resolve()), "--child", str(path),
                       "--pattern", args.pattern], work, build)
        seconds, chunks, rss, cpu = out.split()
        return float(seconds), float(rss), f"{int(chunks):,} distinct chunks", float(cpu)
    out, wall = _run([sys.executable, str(Path(__file__).resolve()), "--child-train", str(path), "--vocab-size",
                      str(args.vocab_size), "--pattern", args.pattern, "-o", str(work / "tok.json")], work, build)
    return wall, float(out.split()[-1]), f"vocab {args.vocab_size}", float("nan")


def make_files(text: bytes, n: int, size: int, per_folder: int, folder: Path) -> bytes:
    """Writes ``n`` files of about ``size`` bytes cut from ``text`` (repeated
    as needed) under ``folder``; returns their bytes joined."""
    need = n * size + 8
    text = text * (need // len(text) + 1)
    parts = []
    pos = 0
    for i in range(n):
        end = pos + size
        while (text[end] & 0xC0) == 0x80:  # a character boundary
            end += 1
        sub = folder / f"{i // per_folder:05d}"
        if i % per_folder == 0:
            sub.mkdir()
        (sub / f"{i:07d}.txt").write_bytes(text[pos:end])
        parts.append(text[pos:end])
        pos = end
    return b"".join(parts)


def case(n: int, text: bytes, args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bytepair-bench-files-"))
    try:
        folder = work / "files"
        folder.mkdir()
        t = time.perf_counter()
        joined = make_files(text, n, args.size, args.per_folder, folder)
        one = work / "one.txt"
        one.write_bytes(joined)
        size = len(joined)
        del joined
        made = time.perf_counter() - t
        print(f"{n:,} files of ~{args.size:,} bytes ({size / 1e6:,.1f} MB, {args.per_folder:,} per folder; "
              f"written in {made:.0f} s), stage {args.stage}, pattern {args.pattern}", flush=True)
        for label, build in args.builds:
            many_r, one_r = [], []
            for _ in range(args.repeats):
                many_r.append(run(args.stage, folder, args, work, build))
                one_r.append(run(args.stage, one, args, work, build))
            many = statistics.median(r[0] for r in many_r)
            single = statistics.median(r[0] for r in one_r)
            print(f"  {label}: many files {many:.3f} s, peak RSS {max(r[1] for r in many_r):.0f} MB;  "
                  f"one file {single:.3f} s, peak RSS {max(r[1] for r in one_r):.0f} MB;  "
                  f"ratio {many / single:.2f}x, overhead {(many - single) / n * 1e6:.1f} us per file")
            print(f"    all runs (s): many {', '.join(f'{r[0]:.3f}' for r in many_r)}; "
                  f"one {', '.join(f'{r[0]:.3f}' for r in one_r)}   ({many_r[0][2]} / {one_r[0][2]})", flush=True)
            if args.stage == "count":  # CPU time moves less than wall time when other jobs share the cores
                many_cpu = statistics.median(r[3] for r in many_r)
                one_cpu = statistics.median(r[3] for r in one_r)
                print(f"    CPU (user + system, s): many {', '.join(f'{r[3]:.2f}' for r in many_r)}; "
                      f"one {', '.join(f'{r[3]:.2f}' for r in one_r)}; ratio of medians {many_cpu / one_cpu:.2f}x, "
                      f"{(many_cpu - one_cpu) / n * 1e6:.1f} us per file", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, nargs="+", default=[4000], help="file counts, one case each")
    ap.add_argument("--size", type=int, default=1100, help="bytes per file (default 1,100)")
    ap.add_argument("--per-folder", type=int, default=1000, help="files per folder (default 1,000)")
    ap.add_argument("--corpus", nargs="+", help="corpus file names (default: every .txt in the corpora folder)")
    ap.add_argument("--stage", choices=("count", "train"), default="count")
    ap.add_argument("--vocab-size", type=int, default=1000, help="--stage train: the vocabulary size")
    ap.add_argument("--pattern", default="gpt2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--builds", nargs="+", metavar="LABEL=PYTHONPATH",
                    help="bytepair packages to compare on the same files (default: the one importable here)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-train", action="store_true", help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--child-train"]:
        child_train(sys.argv[2:])
        return
    args = ap.parse_args()
    args.builds = [tuple(b.split("=", 1)) if "=" in b else (b, b) for b in args.builds or []] or [("bytepair", None)]
    if args.child:
        child(args.child, args.pattern)
        return
    for name, v, low in (("--files", min(args.files), 1), ("--size", args.size, 16),
                         ("--per-folder", args.per_folder, 1), ("--repeats", args.repeats, 1)):
        if v < low:
            ap.error(f"{name} must be at least {low}")
    names = args.corpus or sorted(p.name for p in DATA.glob("*.txt"))
    if not names:
        ap.error(f"no corpus in {DATA}: run scripts/get-data.py or set BYTEPAIR_DATA")
    text = b"".join((DATA / n).read_bytes() for n in names)
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"machine: {platform.node()} {platform.machine()} {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f} at the start")
    print(f"corpora: {', '.join(names)}")
    for n in args.files:
        case(n, text, args)


if __name__ == "__main__":
    main()
