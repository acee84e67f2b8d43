"""Memory limits for training: parsing a size, the default limit, and what
the merge loop needs.

``train(..., memory_limit="2GB")`` / ``bytepair train --memory 2GB`` bound
the trainer's own data (not the interpreter). Counting keeps one table per
thread; when they would pass the limit they are spilled to disk as sorted
runs and merged exactly at the end (first-seen order kept: each chunk keeps
its first position), so the merges are identical to an unbounded run. The
merge loop cannot spill: it needs, for ``n`` distinct chunks holding ``b``
bytes (:func:`merge_loop_bytes`),

* the chunk table: ``b`` + 48 bytes per chunk (bytes, entry, index);
* the loop: 24 bytes per chunk byte (a 16-byte node per byte, 4-byte
  occurrence entries for the pairs starting there and for the pairs merges
  create) + 8 bytes per chunk (its frequency);
* the pairs: about 64 bytes per pair (its count, occurrence list header,
  index entry and heap entries): the 65,536 byte pairs plus about 16 per merge.

When that exceeds the limit, training stops before merging with an error
saying how much it needs.

>>> parse_size("2GB"), parse_size("512 MiB"), parse_size(1 << 30)
(2000000000, 536870912, 1073741824)
"""

from __future__ import annotations

import os
import re
from typing import Optional, Union

from .errors import TrainingError

#: The default limit: this fraction of the machine's physical memory.
DEFAULT_FRACTION = 0.5
#: Smallest accepted limit (the interpreter alone needs more).
MIN_LIMIT = 16_000_000
#: Largest accepted limit (1 PB).
MAX_LIMIT = 10**15

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*")


def parse_size(value: Union[int, str]) -> int:
    """Bytes from an int or a size like ``"2GB"``, ``"1.5 GiB"``, ``"300MB"``
    (decimal kB/MB/GB/TB, binary KiB/MiB/GiB/TiB), between 16 MB and 1 PB;
    anything else raises TrainingError naming the value."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TrainingError(f"memory_limit must be a size like '2GB' or an int of bytes, got {value!r}")
    if isinstance(value, int):
        n = value
    else:
        m = _SIZE.fullmatch(value)
        unit = m.group(2).upper() if m else ""
        if m is None or unit not in _UNITS:
            raise TrainingError(f"memory_limit {value!r} is not a size: write e.g. '2GB', '512MiB' or a number of bytes")
        n = int(float(m.group(1)) * _UNITS[unit])
    if not MIN_LIMIT <= n <= MAX_LIMIT:
        raise TrainingError(f"memory_limit {value!r} is out of range: give between 16MB and 1PB")
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


def merge_loop_bytes(chunks: int, chunk_bytes: int, merges: int) -> int:
    """What training from a table of ``chunks`` distinct chunks holding
    ``chunk_bytes`` bytes needs for ``merges`` merges (see the module docstring).

    >>> merge_loop_bytes(770_000, 7_000_000, 32_768) // 10**6
    255
    """
    table = chunk_bytes + 48 * chunks
    loop = 24 * chunk_bytes + 8 * chunks
    pairs = 64 * (65_536 + 16 * merges)
    return table + loop + pairs
