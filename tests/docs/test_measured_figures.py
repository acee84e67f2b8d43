"""Every performance table names the commit it was measured at, and fails once the code it
measured has changed too much since.

Each Markdown table in the pages below is followed (after at most one blank line) by one or
more markers, each an HTML comment on a line of its own or at the end of a short visible
line such as ``Measured at `0123abc`.``:

``<!-- measured: SHA paths: PATH... max-change: N% -->``
    The table's figures (or those of some of its rows: a table may carry several markers)
    were measured on the tree of commit SHA (the full 40 hex digits), and depend on the
    code under PATH... (files or folders of the repository; ``:!PATH`` leaves a file or
    folder out, git's exclude pathspec, for code under a path that the table's command
    does not run). The test counts the code lines
    that differ between SHA and the working tree under those paths and fails when they are
    more than N % of the code there at SHA: re-run the table's command, then put the new
    commit in the marker.
``<!-- record: SHA -->``
    The table records a comparison made at SHA between two builds (an A/B of a change, or
    a change measured and not kept). It says what was decided and why, not how fast the
    tree is today, so no drift is checked; it still names its commit.
``<!-- not timed: REASON -->``
    The table holds no speed or memory figure (an index, a list of arguments, token counts
    fixed by the training rule that the exactness tests hold).

A visible ``Measured at `abc1234`.`` (or ``Recorded at``) line must show the first seven
digits of the marker's commit, so a reader sees it on the rendered page.

"Code lines that differ" are counted as the multiset difference of the stripped, non-blank,
non-comment lines of every file under the paths, at SHA and now: a line moved to another
file or another place counts nothing, an edited line counts twice (once gone, once new).
Plain ``git diff --numstat`` would count the moves of a file split in two as new code.

The check needs git and the marker's commit. Outside a git checkout (an sdist) it skips;
with a checkout but no ``git`` program, or a commit the clone does not have (a shallow
clone), it fails and says so: CI clones with full history.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    "README.md",
    "docs/performance.md",
    "docs/training.md",
    "docs/training-at-scale.md",
    "docs/superword.md",
    "benches/RESULTS.md",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "benches" / "results").glob("*.md")),
]

MEASURED = re.compile(r"<!-- measured: ([0-9a-f]{40}) paths: (.+?) max-change: (\d+)% -->")
RECORD = re.compile(r"<!-- record: ([0-9a-f]{40}) -->")
NOT_TIMED = re.compile(r"<!-- not timed: \S.*? -->")
SEPARATOR = re.compile(r"^\|[-:| ]+\|?\s*$")

if not (ROOT / ".git").exists():  # an unpacked sdist: no history to measure against
    pytest.skip("needs a git checkout of the repository", allow_module_level=True)


def tables(page: str) -> list[tuple[int, list[str]]]:
    """(line number of the header row, the marker lines after the table) for every table."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and SEPARATOR.match(lines[i + 1]):
            start = i
            while i < len(lines) and lines[i].startswith("|"):
                i += 1
            if i < len(lines) and not lines[i].strip():
                i += 1
            markers = []
            while i < len(lines) and "<!--" in lines[i]:
                markers.append(lines[i])
                i += 1
            out.append((start + 1, markers))
        else:
            i += 1
    return out


def all_markers() -> list[tuple[str, str]]:
    """(where, marker line) for every marker of every table."""
    return [(f"{page}:{line}", m) for page in PAGES for line, markers in tables(page) for m in markers]


def git(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("git")
    if exe is None:
        pytest.fail("the figures' check needs the `git` program on PATH (this is a git checkout)")
    return subprocess.run([exe, "-C", str(ROOT), *args], capture_output=True, text=True, check=False)


def code_lines(rev: str | None, paths: tuple[str, ...]) -> Counter[str]:
    """The stripped, non-blank, non-comment lines under `paths` at `rev` (None: the working tree)."""
    args = ["grep", "-h", "-I", "-e", ""] + ([rev] if rev else ["--untracked"]) + ["--", *paths]
    run = git(*args)
    if run.returncode not in (0, 1):  # 1: nothing matched (no such paths)
        pytest.fail(f"git grep failed: {run.stderr.strip()}")
    counted: Counter[str] = Counter()
    for line in run.stdout.splitlines():
        text = line.strip()
        if text and not is_comment(text):
            counted[text] += 1
    return counted


def is_comment(line: str) -> bool:
    """A Rust or Python comment line (a Rust attribute, `#[...]`, is code)."""
    return line.startswith("//") or (line.startswith("#") and not line.startswith(("#[", "#![")))


def changed(then: Counter[str], now: Counter[str]) -> int:
    """Lines in one multiset and not the other: a moved line counts 0, an edited one 2."""
    return sum(((then - now) + (now - then)).values())


@cache
def drift(sha: str, paths: tuple[str, ...]) -> tuple[int, int]:
    """(code lines changed since `sha` under `paths`, code lines there at `sha`)."""
    if git("cat-file", "-e", f"{sha}^{{commit}}").returncode != 0:
        pytest.fail(
            f"commit {sha} is not in this clone: the figures' check needs the full history (git fetch --unshallow)"
        )
    then, now = code_lines(sha, paths), code_lines(None, paths)
    return changed(then, now), sum(then.values())


def test_every_table_has_a_marker():
    bad = []
    for page in PAGES:
        for line, markers in tables(page):
            kinds = [bool(MEASURED.search(m) or RECORD.search(m) or NOT_TIMED.search(m)) for m in markers]
            if not markers or not all(kinds):
                bad.append(f"{page}:{line}")
    assert not bad, (
        "tables without a `measured`, `record` or `not timed` marker (see this test's docstring):\n" + "\n".join(bad)
    )


def test_markers_show_their_commit():
    bad = []
    for where, marker in all_markers():
        found = MEASURED.search(marker) or RECORD.search(marker)
        if found and f"`{found.group(1)[:7]}`" not in marker:
            bad.append(f"{where}: say `Measured at `{found.group(1)[:7]}`.` before the marker")
    assert not bad, "\n".join(bad)


def test_measured_paths_exist():
    bad = []
    for where, marker in all_markers():
        found = MEASURED.search(marker)
        if found:
            bad += [f"{where}: {p}" for p in found.group(2).split() if not (ROOT / p.removeprefix(":!")).exists()]
    assert not bad, "marker paths that are not in the tree:\n" + "\n".join(bad)


def test_figures_are_not_stale():
    stale = []
    for where, marker in all_markers():
        found = MEASURED.search(marker)
        if not found:
            continue
        sha, paths, limit = found.group(1), tuple(found.group(2).split()), int(found.group(3))
        changed, total = drift(sha, paths)
        if changed * 100 > limit * max(total, 1):
            stale.append(
                f"{where}: {changed} of {total} code lines under {' '.join(paths)} changed since "
                f"{sha[:7]} ({100 * changed / max(total, 1):.0f} % > {limit} %)"
            )
    assert not stale, (
        "figures measured on code that has changed since; re-run the command above each table "
        "and put the new commit in its marker:\n" + "\n".join(stale)
    )


def test_the_drift_count():
    then = Counter({"a();": 1, "b();": 1, "c();": 2})
    assert changed(then, Counter({"c();": 2, "b();": 1, "a();": 1})) == 0  # moved
    assert changed(then, Counter({"a();": 1, "b(1);": 1, "c();": 2})) == 2  # one line edited
    assert changed(then, Counter({"a();": 1, "b();": 1, "c();": 1})) == 1  # one copy removed
    assert [is_comment(x) for x in ("// x", "/// x", "# x", "#[inline]", "#![deny(x)]", "x  # y")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
