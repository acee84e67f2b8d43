"""The folder walk every data command shares, and the core's reading of text
files: the order is ``sorted()`` of the full paths, only regular files are
taken (a FIFO is skipped in a folder, refused when named, never waited on),
a file named twice (a hard link, a folder and a file in it) is counted once,
and the progress total of a folder of many files is estimated without
looking up every file (speed: benches/bench_many_files.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair
from bytepair import _core, patterns
from bytepair import counts as counts_module
from bytepair.counts import count_chunks, input_size
from bytepair.errors import OutputIsInputError, ReadError
from bytepair.outputs import check_outputs
from bytepair.shards.paths import expand, expand_entries


def _walk_sorted(top: str) -> list:
    """The order the readers promise, stated with os.walk: every regular file
    under ``top`` (names starting with . skipped, links to folders not
    entered), sorted by full path."""
    found = []
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [os.path.join(root, f) for f in files
                  if not f.startswith(".") and os.path.isfile(os.path.join(root, f))]
    return sorted(found)


def _tree(root: Path) -> Path:
    top = root / "corpus"
    names = ["a.txt", "a/x.txt", "a-b/y.txt", "a b.txt", "ab", "a0/z", "b/c/d/e.txt", "B.txt", "é.txt",
             "a/.hidden.txt", ".dot/f.txt", "z/a.txt", "z.txt", "a.b/q", "a/b/.c", "~x"]
    for i, n in enumerate(names):
        p = top / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"document {i} {n}\n", encoding="utf-8")
    os.symlink(top / "z.txt", top / "link.txt")  # a link to a file: read
    os.symlink(top / "b", top / "linkdir")  # a link to a folder: not entered
    os.symlink(top / "gone", top / "broken.txt")  # a link to nothing: skipped
    os.mkfifo(top / "a" / "pipe.txt")  # skipped
    return top


def test_folder_order_is_sorted_full_paths_of_regular_files(tmp_path):
    top = _tree(tmp_path)
    for spelling in (str(top), str(top) + "/"):
        want = _walk_sorted(spelling)
        assert expand(spelling) == want
        entries = expand_entries(spelling)
        assert [f for f, _ in entries] == want
        assert [inode for _, inode in entries] == [os.stat(f).st_ino for f in want]
    assert not any(f.endswith(("pipe.txt", "broken.txt", ".hidden.txt")) or "/linkdir/" in f for f in want)


def test_files_named_twice_are_counted_once(tmp_path):
    top = tmp_path / "docs"
    top.mkdir()
    texts = [f"text number {i} with words {'ab' * i}" for i in range(200)]
    for i, t in enumerate(texts):
        (top / f"{i:03d}.txt").write_text(t, encoding="utf-8")
    os.link(top / "007.txt", top / "zz-hardlink.txt")  # the same file under another name
    want = count_chunks(texts, pattern="gpt2")
    for data in ([top], [top, top / "010.txt", top], [top / "003.txt", top], [top / "." / "003.txt", top]):
        got = count_chunks(data, pattern="gpt2")
        order = [texts[3]] + texts[:3] + texts[4:] if data[0].name == "003.txt" else texts
        assert list(got.items()) == list(count_chunks(order, pattern="gpt2").items()), data
    assert count_chunks([top], pattern="gpt2").total() == want.total()


def test_the_core_refuses_a_fifo_without_waiting(tmp_path):
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    ok = tmp_path / "ok.txt"
    ok.write_text("some text", encoding="utf-8")
    code = (
        "import sys\n"
        "from bytepair import _core, patterns\n"
        "from bytepair.errors import ReadError\n"
        "c = _core.ChunkCounter(patterns.resolve('gpt2'), [], None, 2)\n"
        "try:\n"
        "    c.feed_text_files(sys.argv[1:])\n"
        "except ReadError as e:\n"
        "    print(e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(ok), str(fifo)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "pipe.txt" in r.stdout and "not a regular file" in r.stdout


def test_missing_and_bad_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        count_chunks([tmp_path / "missing.txt"], pattern="gpt2")
    top = tmp_path / "docs"
    top.mkdir()
    for i in range(150):
        (top / f"{i:03d}.txt").write_text(f"doc {i}", encoding="utf-8")
    (top / "120.txt").write_bytes(b"abc\xc3")  # a cut character
    with pytest.raises(ReadError, match=r"120\.txt.*offset 3"):
        count_chunks([top], pattern="gpt2")


def test_progress_total_is_exact_or_estimated_from_a_sample(tmp_path, monkeypatch):
    top = tmp_path / "docs"
    top.mkdir()
    sizes = [100 + (i % 7) * 10 for i in range(300)]
    for i, n in enumerate(sizes):
        (top / f"{i:03d}.txt").write_bytes(b"x" * n)
    os.link(top / "000.txt", tmp_path / "again.txt")
    assert input_size([top, tmp_path / "again.txt"]) == sum(sizes)  # exact: each file once
    monkeypatch.setattr(counts_module, "SIZE_SAMPLE", 30)
    estimate = input_size([top])
    assert estimate is not None and abs(estimate - sum(sizes)) <= 0.05 * sum(sizes)
    assert estimate != sum(sizes) or len(set(sizes)) == 1  # a sample, not every file


def test_an_output_linked_into_an_input_folder_is_refused(tmp_path):
    top = tmp_path / "corpus"
    (top / "sub").mkdir(parents=True)
    for i in range(20):
        (top / "sub" / f"{i}.txt").write_text("text", encoding="utf-8")
    os.link(top / "sub" / "13.txt", tmp_path / "out.json")
    with pytest.raises(OutputIsInputError, match=r"13\.txt"):
        check_outputs([("-o", tmp_path / "out.json")], [("the input", top)])
    os.symlink(tmp_path / "target.json", top / "sub" / "zlink.txt")
    (tmp_path / "target.json").write_text("x", encoding="utf-8")
    with pytest.raises(OutputIsInputError, match=r"zlink\.txt"):
        check_outputs([("-o", tmp_path / "target.json")], [("the input", top)])
    check_outputs([("-o", tmp_path / "new.json")], [("the input", top)])


def test_training_on_a_folder_gives_the_merges_of_its_documents(tmp_path, corpora):
    text = corpora["en_austen.txt"][:40_000] + corpora["ko_prose.txt"][:8_000]
    top = tmp_path / "docs"
    docs = []
    for i in range(0, len(text), 300):
        p = top / f"{i // 30_000}" / f"{i:06d}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text[i:i + 300], encoding="utf-8")
        docs.append((str(p), text[i:i + 300]))
    ordered = [t for _, t in sorted(docs)]
    want = bytepair.train(ordered, 400).merges
    for threads in (1, 2):
        assert bytepair.train(Path(top), 400, num_threads=threads).merges == want, threads
    # counted under a memory limit small enough to spill: the same table
    paths = [p for p, _ in sorted(docs)]
    ref = _core.ChunkCounter(patterns.resolve("o200k"), [], None, 2)
    ref.feed_texts(ordered)
    want_items = ref.finish().items()
    for threads in (1, 2):
        c = _core.ChunkCounter(patterns.resolve("o200k"), [], None, threads, memory_limit=1 << 14,
                               spill_dir=tmp_path)
        assert c.feed_text_files(paths) == len(text.encode("utf-8"))
        assert c.spilled_runs > 0
        assert c.finish().items() == want_items, threads


def test_names_that_are_not_utf8_keep_the_sorted_order(tmp_path):
    top = tmp_path / "odd"
    top.mkdir()
    for name in (b"a\xff.txt", b"a\xc3\xa9.txt", "a\ud7ff.txt".encode("utf-8", "surrogatepass"), b"a.txt",
                 b"a\xee\x80\x80.txt", b"a\xff"):
        (top / os.fsdecode(name)).write_text("text", encoding="utf-8")
    (top / os.fsdecode(b"a\xfe")).mkdir()
    (top / os.fsdecode(b"a\xfe") / "in.txt").write_text("text", encoding="utf-8")
    assert expand(top) == _walk_sorted(str(top))
    assert len(expand(top)) == 7


class _Progress:
    """A progress line whose report deletes a file the walk has listed but not yet read."""

    def __init__(self, victim: Path) -> None:
        self.victim = victim

    def counting(self):
        return None

    def counted(self, n: int) -> None:
        if self.victim.exists():
            self.victim.unlink()


def test_a_file_gone_between_the_walk_and_its_reading_is_named(tmp_path, monkeypatch):
    top = tmp_path / "docs"
    top.mkdir()
    for i in range(5):
        (top / f"{i}.txt").write_text(f"doc {i}", encoding="utf-8")
    monkeypatch.setattr(counts_module, "FILES_PER_CALL", 2)  # the walk stops after 0.txt and 1.txt
    with pytest.raises(FileNotFoundError, match=r"2\.txt"):
        count_chunks([top], pattern="gpt2", progress=_Progress(top / "2.txt"))


def test_a_shard_inside_a_folder_is_read_in_its_place(tmp_path):
    top = tmp_path / "docs"
    (top / "b").mkdir(parents=True)
    (top / "a.txt").write_text("first words", encoding="utf-8")
    (top / "b" / "c.jsonl").write_text('{"text": "middle words"}\n', encoding="utf-8")
    (top / "b" / "d.txt").write_text("last words", encoding="utf-8")
    (top / "e.txt").write_text("first words", encoding="utf-8")
    want = count_chunks(["first words", "middle words", "last words", "first words"], pattern="gpt2")
    assert list(count_chunks([top], pattern="gpt2").items()) == list(want.items())
