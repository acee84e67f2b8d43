"""Memory limits for training: parsing a size, the default limit, what the
merge loop needs; and the process's resident memory (now and at its peak),
for the progress line and the CLI's summary.

``train(..., memory_limit="2GB")`` / ``bytepair train --memory 2GB`` bound
the trainer's own data (not the interpreter). Counting keeps one table per
thread; when they would pass the limit they are spilled to disk as sorted
runs and merged exactly at the end (first-seen order kept: each chunk keeps
its first position), so the merges are identical to an unbounded run. The
merge loop cannot spill. For ``n`` distinct chunks holding ``b`` bytes and
``m`` merges it needs about (:func:`merge_loop_bytes`):

* while it is built, the chunk table beside it: ``b`` + 48 bytes per chunk
  (bytes, entry, index), freed before the pairs are counted;
* with the compact loop (any pattern on real text: chunks are short),
  2 bytes per chunk byte (4 when ``m`` > 65,280), 16 bytes per chunk, 4 bytes
  per (pair, chunk) occurrence and about 60 bytes per pair; the pairs are
  the 65,536 byte pairs, plus about 28 per merge for the first 32,768 merges
  and 4 per merge after (measured on source code and on CJK text);
* with the position loop (long chunks: no pattern, or hostile input), 24
  bytes per chunk byte (a 16-byte node, 4-byte occurrences) + 8 per chunk,
  the table alongside, and about 64 bytes per pair (16 per merge).

When that exceeds the limit, training stops before merging with an error
saying how much it needs. The compact loop hands over to the position loop
when a long chunk makes its work pass a budget; under a limit only the
compact loop fits, it runs to the end instead.

>>> parse_size("2GB"), parse_size("512 MiB"), parse_size(1 << 30)
(2000000000, 536870912, 1073741824)
"""

from __future__ import annotations

import os
import re
import sys
from fractions import Fraction
from typing import Optional, Tuple, Union

try:
    import resource  # Unix only: the peak resident memory
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]

from .errors import TrainingError

#: The default limit: this fraction of the machine's physical memory.
DEFAULT_FRACTION = 0.5
#: Smallest accepted limit (the interpreter alone needs more).
MIN_LIMIT = 16_000_000
#: Largest accepted limit (1 PB).
MAX_LIMIT = 10**15

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40, "PIB": 1 << 50}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*")


def parse_size(value: Union[int, str]) -> int:
    """Bytes from an int or a size like ``"2GB"``, ``"1.5 GiB"``, ``"300MB"``
    (decimal kB/MB/GB/TB/PB, binary KiB/MiB/GiB/TiB/PiB), between 16 MB and 1 PB;
    anything else raises TrainingError naming the value."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TrainingError(f"memory_limit must be a size like '2GB' or an int of bytes, got {value!r}",
                            argument="memory_limit")
    if isinstance(value, int):
        n = value
    else:
        m = _SIZE.fullmatch(value)
        unit = m.group(2).upper() if m else ""
        if m is None or unit not in _UNITS:
            raise TrainingError(f"memory_limit {value!r} is not a size: write e.g. '2GB', '512MiB' or a number of bytes",
                                argument="memory_limit")
        n = int(Fraction(m.group(1)) * _UNITS[unit])  # exact: a float overflows past 1e308
    if not MIN_LIMIT <= n <= MAX_LIMIT:
        raise TrainingError(f"memory_limit {value!r} is out of range: give between 16MB and 1PB", argument="memory_limit")
    return n


def physical_memory() -> Optional[int]:
    """The machine's physical memory in bytes, when the system says."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def default_limit() -> int:
    """:data:`DEFAULT_FRACTION` of the physical memory (4 GB when unknown)."""
    total = physical_memory()
    return max(MIN_LIMIT, int(total * DEFAULT_FRACTION)) if total else 4 * 10**9


def counting_share(limit: int, num_threads: Optional[int]) -> int:
    """The counting tables' part of ``limit``: half of what is left after
    each thread's read buffer (9 MiB) and 16 MB for everything else, at least
    4 MB. The other half is for what a table holds beyond its own bytes while
    it grows (old and new slots) and while it is spilled (its entries sorted
    in a list of their own): counting the spans of 1 GB under
    ``memory_limit="1GB"`` peaked at 1.5 times the tables' share."""
    threads = num_threads or os.cpu_count() or 1
    return max(4 << 20, (limit - threads * (9 << 20) - 16_000_000) // 2)


def merge_loop_bytes(chunks: int, chunk_bytes: int, merges: int, compact: bool = True) -> int:
    """What training from a table of ``chunks`` distinct chunks holding
    ``chunk_bytes`` bytes needs for ``merges`` merges with the compact loop
    (or the position loop: ``compact=False``; see the module docstring and
    ``ChunkTable.merge_loop()``).

    >>> merge_loop_bytes(758_334, 6_872_375, 32_512) // 10**6
    119
    >>> merge_loop_bytes(758_334, 6_872_375, 32_512, compact=False) // 10**6
    251
    """
    table = _table_bytes(chunks, chunk_bytes)
    if not compact:
        return table + 24 * chunk_bytes + 8 * chunks + 64 * (65_536 + 16 * merges)
    symbols = (2 if merges <= 65_280 else 4) * chunk_bytes + 16 * chunks
    pairs = 65_536 + 28 * min(merges, 32_768) + 4 * max(0, merges - 32_768)
    occurrences = chunk_bytes + 2 * pairs
    return max(table + symbols, symbols + 4 * occurrences + 60 * pairs)


def _table_bytes(chunks: int, chunk_bytes: int) -> int:
    """A chunk table's own bytes: its arena and about 48 bytes per chunk
    (entry, index; the core's ``ChunkTable::priced_bytes`` in ``src/train/chunks.rs``)."""
    return chunk_bytes + 48 * chunks


def current_rss() -> Optional[int]:
    """This process's resident memory now, in bytes: the second field of
    ``/proc/self/statm`` (pages) on Linux; None elsewhere."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[1])
        return pages * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def peak_rss() -> Optional[int]:
    """This process's peak resident memory so far, in bytes (``getrusage``;
    None where unknown, as on Windows)."""
    if resource is None:  # pragma: no cover - Windows
        return None
    ru = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return ru if sys.platform == "darwin" else ru * 1024  # macOS: bytes; Linux, BSD: KiB


def rss_figure() -> Optional[Tuple[str, int]]:
    """The memory figure a progress line shows: ``("RSS", now)`` where the
    current resident memory is known (Linux), else ``("peak RSS", peak)``,
    else None.

    >>> label, n = rss_figure()
    >>> label in ("RSS", "peak RSS") and n > 0
    True
    """
    now = current_rss()
    if now is not None:
        return "RSS", now
    peak = peak_rss()
    return None if peak is None else ("peak RSS", peak)
