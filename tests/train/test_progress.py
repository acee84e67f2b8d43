"""The training progress line: its figures (amounts, rates, memory, ETA) under a
fake clock and a fake memory reader, rewriting in a terminal, throttling in a
log, a failing stream, and real trainings that show it on stderr."""

from __future__ import annotations

import io
import re
import sys
import warnings

import bytepair
from bytepair import memory
from bytepair.progress import LOG_INTERVAL, ProgressLine, TrainProgress, format_bytes, format_duration, format_status
from conftest import DATA
from conftest import run_cli as run


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def fake_rss():
    return "RSS", 123_400_000


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


# ---------------------------------------------------------------- figures


def test_units():
    assert [format_bytes(n) for n in (0, 999, 1000, 1499, 12_345_678, 999_400_000, 999_600_000, 2.5e12, 4e15)] == [
        "0 B", "999 B", "1 kB", "1.5 kB", "12.3 MB", "999 MB", "1 GB", "2.5 TB", "4e+03 TB"]
    assert [format_duration(s) for s in (0.04, 9.94, 9.96, 59.4, 59.6, 3599.4, 3600, 90061)] == [
        "0.0 s", "9.9 s", "10 s", "59 s", "1:00", "59:59", "1:00:00", "25:01:01"]


def test_counting_line_rate_memory_and_eta():
    # 30 MB of 120 MB in 3 s: 10 MB/s, 90 MB left -> 9 s
    line = format_status("counting", 30_000_000, 120_000_000, "B", 3.0, ("RSS", 250_000_000))
    assert line == "counting 30 MB/120 MB 25% | 10 MB/s | RSS 250 MB | ETA 9.0 s"
    # no total (a stream of documents): the time elapsed instead of an ETA
    assert format_status("counting", 30_000_000, None, "B", 3.0, None) == "counting 30 MB | 10 MB/s | elapsed 3.0 s"
    # a total that was too small (an estimate): no percentage, no ETA
    assert format_status("counting", 200, 100, "B", 2.0, None) == "counting 200 B | 100 B/s | elapsed 2.0 s"


def test_merging_line_rate_memory_and_eta():
    line = format_status("merging", 1_500, 32_000, "merges", 2.5, ("peak RSS", 1_230_000_000))
    # 600 merges/s; 30,500 left -> 50.8 s -> "51 s"
    assert line == "merging 1,500/32,000 4% | 600 merges/s | peak RSS 1.23 GB | ETA 51 s"
    late = format_status("merging", 20_000, 32_000, "merges", 1_000.0, None)
    assert late.endswith("| 20 merges/s | ETA 10:00")
    final = format_status("merging", 32_000, 32_000, "merges", 64.0, None, final=True)
    assert final == "merging 32,000/32,000 100% | 500 merges/s | elapsed 1:04"
    # nothing done yet: no rate to tell the time left from
    assert format_status("merging", 0, 10, "merges", 0.5, None).endswith("| 0 merges/s | elapsed 0.5 s")


def test_memory_figures_of_this_process():
    label, n = memory.rss_figure()
    peak = memory.peak_rss()
    assert peak is not None and peak > 10_000_000  # an interpreter with bytepair loaded
    if sys.platform.startswith("linux"):
        now = memory.current_rss()
        assert label == "RSS" and abs(n - now) < 50_000_000
        assert 10_000_000 < now <= peak * 1.01 + 1_000_000
        grow = bytearray(64_000_000)  # touched pages count as resident
        assert memory.current_rss() > now + 50_000_000
        del grow


# ---------------------------------------------------------------- writing


def test_log_gets_a_line_per_interval_and_a_final_line():
    clock = FakeClock()
    out = io.StringIO()
    line = ProgressLine("merging", 8_000, "merges", stream=out, tty=False, clock=clock, rss=fake_rss)
    for k in range(1, 161):  # 160 updates over 20 s, about as often as the core calls
        clock.now += 0.125
        line.update(k * 50)
    line.finish(8_000)
    lines = out.getvalue().splitlines()
    # at 5, 10, 15 and 20 s (LOG_INTERVAL), then the final line
    assert LOG_INTERVAL == 5.0 and len(lines) == 5, lines
    assert lines[0] == "merging 2,000/8,000 25% | 400 merges/s | RSS 123 MB | ETA 15 s"
    assert lines[3].startswith("merging 8,000/8,000 100% | 400 merges/s")
    assert lines[-1] == "merging 8,000/8,000 100% | 400 merges/s | RSS 123 MB | elapsed 20 s"
    assert "\r" not in out.getvalue()


def test_short_work_in_a_log_prints_only_the_final_line():
    clock = FakeClock()
    out = io.StringIO()
    p = TrainProgress(True, 1000, stream=out, tty=False, clock=clock, rss=fake_rss)
    cb = p.counting()
    clock.now += 0.4
    cb(600, 0)
    p.counted(1200)  # more than the estimate: the final line ends at what was counted
    merge = p.merging(100)
    clock.now += 0.5
    merge(0, 40)
    p.merged(70)  # the pairs ran out at 70 of 100
    p.close()
    assert out.getvalue().splitlines() == [
        "counting 1.20 kB/1.20 kB 100% | 3 kB/s | RSS 123 MB | elapsed 0.4 s",
        "merging 70/70 100% | 140 merges/s | RSS 123 MB | elapsed 0.5 s",
    ]


def test_terminal_line_is_rewritten_in_place():
    clock = FakeClock()
    out = Tty()
    line = ProgressLine("counting", None, "B", stream=out, clock=clock, rss=lambda: None)
    assert line.tty and line.interval < 1
    clock.now += 1
    line.update(12_000_000)
    clock.now += 0.05  # sooner than the redraw interval: not drawn
    line.update(13_000_000)
    clock.now += 0.95
    line.update(2_000)  # never goes back
    line.finish()
    text = out.getvalue()
    assert text == ("\rcounting 12 MB | 12 MB/s | elapsed 1.0 s"
                    "\rcounting 13 MB | 6.5 MB/s | elapsed 2.0 s"
                    "\rcounting 13 MB | 6.5 MB/s | elapsed 2.0 s\n")


def test_terminal_line_pads_a_shorter_line_and_fits_the_width():
    clock = FakeClock()
    out = Tty()  # no file descriptor: 80 columns
    line = ProgressLine("x" * 200, None, "shards", stream=out, clock=clock, rss=lambda: None)
    clock.now += 1
    line.update(5)
    first = out.getvalue()
    assert first.startswith("\r") and len(first) == 1 + 79  # one column short: the cursor never wraps
    line.label = "short"
    clock.now += 1
    line.update(6)
    second = out.getvalue()[len(first):]
    assert second.startswith("\rshort 6 | ") and len(second) == 80  # blanks over the longer line
    line.clear()
    assert out.getvalue()[len(first) + len(second):] == "\r" + " " * len(second[1:].rstrip()) + "\r"


def test_a_failing_stream_silences_the_line_and_never_raises():
    class Broken(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    clock = FakeClock()
    p = TrainProgress(True, 100, stream=Broken(), tty=True, clock=clock, rss=fake_rss)
    clock.now += 1
    p.counting()(50, 0)
    p.counted(100)
    p.merging(10)(0, 5)
    p.merged(10)
    p.close()


def test_stopped_work_ends_where_it_stands():
    clock = FakeClock()
    out = io.StringIO()
    p = TrainProgress(True, 1000, stream=out, tty=False, clock=clock, rss=lambda: None)
    cb = p.counting()
    clock.now += 1
    cb(300, 0)
    p.close()  # an error or Ctrl-C while counting: a log gets no final line, the error is its last word
    assert out.getvalue() == ""
    tty = io.StringIO()
    p = TrainProgress(True, 1000, stream=tty, tty=True, clock=clock, rss=lambda: None)
    cb = p.counting()
    clock.now += 1
    cb(300, 0)
    p.close()  # in a terminal the line stays where it stood: the total, no 100 %
    assert tty.getvalue().endswith("counting 0.30 kB/1.00 kB 30% | 300 B/s | elapsed 1.0 s\n")


# ---------------------------------------------------------------- real training


def test_train_with_progress_shows_rate_memory_and_time(capsys):
    text = (DATA / "en_kjv.txt").read_text(encoding="utf-8") * 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the corpus may run out of pairs before 3,000 merges
        tok = bytepair.train(text, 3000, pattern="gpt2", progress=True)
    err = capsys.readouterr().err
    lines = err.splitlines()
    merging = [ln for ln in lines if ln.startswith("merging ")]
    counting = [ln for ln in lines if ln.startswith("counting ")]
    n = len(tok.merges)
    assert counting and merging, err
    assert re.fullmatch(rf"merging {n:,}/{n:,} 100% \| [\d,]+ merges/s \| RSS [\d.]+ [kMG]B \| "
                        r"elapsed [\d.:]+( s)?", merging[-1]), merging[-1]
    size = len(text.encode("utf-8"))
    assert re.fullmatch(rf"counting {re.escape(bytepair.progress.format_bytes(size))}/\S+ \S+ 100% \| "
                        r"[\d.]+ [kMG]?B/s \| RSS [\d.]+ [kMG]B \| elapsed [\d.:]+( s)?", counting[-1]), counting[-1]
    figure = re.search(r"RSS ([\d.]+) ([kMG])B", merging[-1])
    assert figure, merging[-1]
    rss = float(figure.group(1)) * {"k": 1e3, "M": 1e6, "G": 1e9}[figure.group(2)]
    assert 10e6 < rss < 2 * memory.peak_rss()


def test_train_without_progress_is_silent(capsys):
    bytepair.train("hello world " * 1000, 263, pattern="gpt2", progress=False)
    assert capsys.readouterr().err == ""


def test_cli_train_shows_the_line_on_a_terminal_and_reports_peak_memory(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    out = tmp_path / "tok.json"
    code, stdout, err = run(capsys, "train", str(DATA / "en_kjv.txt"), "--vocab-size", "400", "-o", str(out))
    assert code == 0, err
    assert "\rcounting " in err and "\rmerging " in err and " merges/s | RSS " in err, err
    assert re.search(r"peak memory [\d,]+ MB", stdout), stdout
    code, stdout, err = run(capsys, "train", str(DATA / "en_kjv.txt"), "--vocab-size", "400", "-q", "-o", str(out))
    assert code == 0 and err == ""
