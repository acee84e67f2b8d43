"""Progress on stderr: one status line per phase of work, with no dependency
(training here; the shard engines and ``bytepair encode`` use the same line).

Training shows two phases, each on its own line: counting (bytes counted out of
the total when it is known up front, MB/s) and merging (merges made out of the
number asked for, merges/s), both with the process's resident memory (RSS) and
the time left (ETA), or the time elapsed when the total is not known. In a
terminal the line is rewritten in place (``\\r``) a few times a second; in a
log (stderr not a terminal, ``progress=True``) a line is printed at most every
:data:`LOG_INTERVAL` seconds, plus a final line per phase, so logs stay
readable. Shown by default only when stderr is a terminal; ``progress=False``
turns it off and ``progress=True`` forces it on.

>>> import io
>>> clock = iter([0.0, 2.0, 4.0]).__next__
>>> out = io.StringIO()
>>> line = ProgressLine("merging", 1000, "merges", stream=out, tty=False, clock=clock,
...                     rss=lambda: ("RSS", 250_000_000))
>>> line.update(250)  # 2 s in: before the first log interval, nothing is printed
>>> line.finish(1000)
>>> print(out.getvalue(), end="")
merging 1,000/1,000 100% | 250 merges/s | RSS 250 MB | elapsed 4.0 s
"""

from __future__ import annotations

import os
import sys
import time
from typing import IO, Callable, Optional, Tuple

from .memory import rss_figure

Callback = Callable[[int, int], None]
Clock = Callable[[], float]
RssReader = Callable[[], Optional[Tuple[str, int]]]

#: Seconds between two lines written to a log (stderr not a terminal).
LOG_INTERVAL = 5.0
#: Seconds between two redraws of the line in a terminal.
TTY_INTERVAL = 0.2


def enabled(progress: Optional[bool]) -> bool:
    """Whether to show progress: ``None`` means "when stderr is a terminal".

    >>> enabled(False)
    False
    """
    if progress is None:
        return _isatty(sys.stderr)
    return bool(progress)


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def format_bytes(n: float) -> str:
    """A byte count in decimal units, three significant digits.

    >>> format_bytes(999), format_bytes(1234), format_bytes(45_600_000), format_bytes(1.234e9)
    ('999 B', '1.23 kB', '45.6 MB', '1.23 GB')
    """
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 999.5 or unit == "TB":
            break
        n /= 1000
    return f"{n:.0f} B" if unit == "B" else f"{n:.3g} {unit}"


def format_duration(seconds: float) -> str:
    """Seconds as ``4.2 s`` (under 10 s), ``42 s``, ``12:03`` or ``1:02:03``.

    >>> format_duration(4.25), format_duration(42.4), format_duration(723), format_duration(3723)
    ('4.2 s', '42 s', '12:03', '1:02:03')
    """
    if seconds < 9.95:
        return f"{max(seconds, 0.0):.1f} s"
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def _of_total(n: int, total: int) -> str:
    """``n/total`` bytes, both in the total's unit with three significant
    digits of the total, so the amount done keeps one shape from 0 to the end.

    >>> _of_total(987_000_000, 1_234_567_890), _of_total(0, 1_234_567_890), _of_total(300, 1000), _of_total(5, 45)
    ('0.99 GB/1.23 GB', '0.00 GB/1.23 GB', '0.30 kB/1.00 kB', '5 B/45 B')
    """
    units = ("B", "kB", "MB", "GB", "TB")
    k = 0
    while k < len(units) - 1 and total / 1000**k >= 999.5:
        k += 1
    value = total / 1000**k
    decimals = 0 if k == 0 or value >= 99.95 else 1 if value >= 9.995 else 2
    return f"{n / 1000**k:.{decimals}f} {units[k]}/{value:.{decimals}f} {units[k]}"


def format_status(label: str, done: int, total: Optional[int], unit: str, elapsed: float,
                  rss: Optional[Tuple[str, int]], final: bool = False) -> str:
    """One status line: the amount done (of the total when known), the rate,
    the memory figure, and the time left (``ETA``) or, when that cannot be
    told (no total, nothing done yet, the final line), the time elapsed.
    ``unit`` is ``"B"`` (sizes and MB/s) or a word (``"merges"``).

    >>> format_status("counting", 12_300_000, 45_600_000, "B", 1.5, ("RSS", 210_000_000))
    'counting 12.3 MB/45.6 MB 26% | 8.2 MB/s | RSS 210 MB | ETA 4.1 s'
    >>> format_status("counting", 12_300_000, None, "B", 1.5, None)
    'counting 12.3 MB | 8.2 MB/s | elapsed 1.5 s'
    """
    if total is not None and done > total:  # an estimate that was too low: no percentage, no ETA
        total = None
    if unit == "B":
        amount = format_bytes(done) if total is None else _of_total(done, total)
    else:  # the unit is named once, in the rate, so that the line fits 80 columns
        amount = f"{done:,}" if total is None else f"{done:,}/{total:,}"
    parts = [f"{label} {amount}" + (f" {100 * done // total}%" if total else "")]
    if elapsed > 0:
        rate = done / elapsed
        parts.append(f"{format_bytes(rate)}/s" if unit == "B" else f"{rate:,.0f} {unit}/s")
    if rss is not None:
        parts.append(f"{rss[0]} {format_bytes(rss[1])}")
    if not final and total is not None and 0 < done < total and elapsed > 0:
        parts.append(f"ETA {format_duration((total - done) * elapsed / done)}")
    else:
        parts.append(f"elapsed {format_duration(elapsed)}")
    return " | ".join(parts)


class ProgressLine:
    """One status line (:func:`format_status`) for one phase of work.

    :meth:`update` redraws it (in a terminal at most every :data:`TTY_INTERVAL`
    seconds, in a log at most every :data:`LOG_INTERVAL`); :meth:`finish`
    writes the final line and ends it with a newline. A stream that fails
    (closed, broken pipe) silences the line: progress never stops the work.

    Args:
        label: the phase, first on the line (``"counting"``).
        total: the amount at the end, when known.
        unit: ``"B"`` or a word (``"merges"``, ``"shards"``).
        stream: where to write (default: ``sys.stderr``).
        tty: redraw in place (default: whether ``stream`` is a terminal).
        clock: seconds, monotonic (tests pass a fake one).
        rss: the memory figure, ``(label, bytes)`` or None (tests pass a fake one).
        interval: seconds between two writes (default by ``tty``, see above).
    """

    def __init__(self, label: str, total: Optional[int], unit: str, *, stream: Optional[IO[str]] = None,
                 tty: Optional[bool] = None, clock: Clock = time.monotonic, rss: RssReader = rss_figure,
                 interval: Optional[float] = None) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.tty = _isatty(self.stream) if tty is None else tty
        self.interval = (TTY_INTERVAL if self.tty else LOG_INTERVAL) if interval is None else interval
        self.clock = clock
        self.rss = rss
        self.done = 0
        self.start = clock()
        # a log gets its first line one interval in (short work prints only the final line)
        self._last = self.start if not self.tty else -float("inf")
        self._shown = 0  # characters of the line now on the terminal
        self._open = True

    def status(self, now: float, final: bool = False) -> str:
        """The line for ``now`` (see :func:`format_status`)."""
        return format_status(self.label, self.done, self.total, self.unit, now - self.start, self.rss(), final)

    def update(self, done: int) -> None:
        """Records ``done`` (never going back) and redraws when it is time to."""
        if not self._open:
            return
        self.done = max(self.done, done)
        now = self.clock()
        if now - self._last < self.interval:
            return
        self._last = now
        self._write(self.status(now), final=False)

    def finish(self, done: Optional[int] = None) -> None:
        """Writes the final line. ``done`` is the real total when the work
        completed (the total was unknown, an estimate, or more than the work
        needed); without it the line ends where it stands (work stopped)."""
        if not self._open:
            return
        if done is not None:
            self.done = done
            if self.total is not None:
                self.total = done
        self._write(self.status(self.clock(), final=True), final=True)
        self._open = False

    def clear(self) -> None:
        """Ends the line leaving nothing behind: a terminal's line is erased, a
        log gets no final line."""
        if self._open and self.tty and self._shown:
            try:
                self.stream.write("\r" + " " * self._shown + "\r")
                self.stream.flush()
            except (OSError, ValueError):
                pass
        self._open = False
        self._shown = 0

    def _write(self, text: str, final: bool) -> None:
        try:
            if self.tty:
                text = text[: _columns(self.stream) - 1]  # a wrapped line cannot be rewritten
                pad = " " * max(0, self._shown - len(text))
                self.stream.write("\r" + text + pad + ("\n" if final else ""))
                self._shown = 0 if final else len(text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            self._open = False


def _columns(stream: object) -> int:
    """The terminal's width (80 when it does not say: a pseudo-terminal may report 0)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return 80
    return columns if columns > 0 else 80


class TrainProgress:
    """The two phases of training: "counting" (bytes, of the total when known),
    then "merging" (merges, of the number asked for).

    The Rust core calls the callbacks with ``(bytes_done, merges_done)`` of the
    current call about ten times a second. ``stream``, ``tty``, ``clock``,
    ``rss`` and ``interval`` go to each :class:`ProgressLine`.

    >>> p = TrainProgress(False)
    >>> p.counting()(1024, 0)
    >>> p.close()
    """

    def __init__(self, show: bool, total_bytes: Optional[int] = None, **line_options: object) -> None:
        self.show = show
        self.total_bytes = total_bytes
        self._options = line_options
        self._bytes_base = 0
        self._count_line: Optional[ProgressLine] = None
        self._merge_line: Optional[ProgressLine] = None

    def _line(self, label: str, total: Optional[int], unit: str) -> ProgressLine:
        return ProgressLine(label, total, unit, **self._options)  # type: ignore[arg-type]

    def counting(self) -> Callback:
        """A callback for one counting call; call :meth:`counted` after it returns."""
        if self.show and self._count_line is None:
            self._count_line = self._line("counting", self.total_bytes, "B")
        line = self._count_line
        base = self._bytes_base

        def cb(done: int, _merges: int) -> None:
            if line is not None:
                line.update(base + done)

        return cb

    def counted(self, nbytes: int) -> None:
        """Records that a counting call finished after ``nbytes`` bytes."""
        self._bytes_base += nbytes
        if self._count_line is not None:
            self._count_line.update(self._bytes_base)

    def end_counting(self) -> None:
        """Ends the counting line at the bytes counted: 100 %, even when the
        total was an estimate (compressed files) or unknown."""
        if self._count_line is not None:
            self._count_line.finish(self._bytes_base)
            self._count_line = None

    def merging(self, total: int) -> Callback:
        """Ends counting and returns a callback for the merge loop (``total``
        merges at most)."""
        self.end_counting()
        line = self._merge_line = self._line("merging", total, "merges") if self.show else None

        def cb(_bytes: int, done: int) -> None:
            if line is not None:
                line.update(done)

        return cb

    def merged(self, n: int) -> None:
        """Records that the merge loop made ``n`` merges: the line ends at 100 %
        even when training stopped before ``total`` (the pairs ran out)."""
        if self._merge_line is not None:
            self._merge_line.finish(n)
            self._merge_line = None

    def close(self) -> None:
        """Ends an open line where it stands (training stopped: an error, Ctrl-C);
        a log gets no final line, so the error is the last thing it says."""
        for line in (self._count_line, self._merge_line):
            if line is not None:
                if line.tty:
                    line.finish()
                else:
                    line.clear()
        self._count_line = self._merge_line = None
