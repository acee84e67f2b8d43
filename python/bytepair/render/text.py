"""Plain-text and rich tables for the results of :mod:`bytepair.inspect` and the CLI:
token bytes shown as text, display widths (East Asian wide characters take two
columns), number formatting, and :class:`TableResult`, the base of every result
that renders as a table."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any, Optional


def is_complete_utf8(b: bytes) -> bool:
    """True when ``b`` decodes as UTF-8 on its own.

    >>> is_complete_utf8("토".encode()), is_complete_utf8("토".encode()[:2])
    (True, False)
    """
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def show_bytes(b: bytes) -> str:
    """Token bytes as text: valid UTF-8 as itself, other bytes as ``\\xNN``.

    >>> show_bytes(" low".encode()), show_bytes(b" \\xed\\x86")
    (' low', ' \\\\xed\\\\x86')
    """
    return b.decode("utf-8", errors="backslashreplace")


def show_token(b: bytes, limit: Optional[int] = None) -> str:
    """Token bytes quoted for one line of text output: :func:`show_bytes` with
    control whitespace made visible, in single quotes. Every command shows a
    token this way; JSON output carries :func:`show_bytes` (the same escapes,
    unquoted), or :func:`bytes_json` (with the hex).

    >>> print(show_token(" low".encode()), show_token(b" \\xec"), show_token(b"a\\n"))
    ' low' ' \\xec' 'a\\n'

    With ``limit``, a token longer than that many bytes shows its first
    ``limit`` bytes and its length:

    >>> print(show_token(b"ab" * 300, limit=6))
    'ababab'... (600 bytes)
    """
    if limit is not None and len(b) > limit:
        return "'" + visible(show_bytes(b[:limit])) + f"'... ({len(b):,} bytes)"
    return "'" + visible(show_bytes(b)) + "'"


def visible(s: str) -> str:
    """Makes control whitespace visible (``\\n`` -> ``\\\\n``) for one-line display.

    >>> print(visible("a\\tb\\n"))
    a\\tb\\n
    """
    return s.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")



def display_width(s: str) -> int:
    """Terminal columns taken by ``s`` (East Asian wide characters take two).

    >>> display_width("abc"), display_width("토큰")
    (3, 4)
    """
    w = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        w += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return w


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "") -> str:
    """A plain-text table with columns padded to their display width.

    ``align`` holds one ``l`` or ``r`` per column (default: numbers right, text left).

    >>> print(format_table(["name", "n"], [["a", 1], ["bb", 22]]))
    name   n
    a      1
    bb    22
    """
    cells = [[_cell(v) for v in row] for row in rows]
    if not align:
        align = "".join("r" if num else "l" for num in _numeric_columns(rows, len(headers)))
    widths = [display_width(h) for h in headers]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], display_width(c))

    def line(values: Sequence[str]) -> str:
        out = []
        for i, v in enumerate(values):
            pad = " " * (widths[i] - display_width(v))
            out.append(pad + v if align[i] == "r" else v + pad)
        return "  ".join(out).rstrip()

    return "\n".join([line(list(headers))] + [line(r) for r in cells])


def _numeric_columns(rows: Sequence[Sequence[Any]], n: int) -> list[bool]:
    """A column is numeric when every value in it is a number or None (and one is a number)."""
    out = []
    for i in range(n):
        values = [r[i] for r in rows if r[i] is not None and r[i] != ""]
        out.append(bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                        for v in values))
    return out


class Plain(int):
    """An int shown without thousands separators in tables (ids, merge numbers)."""


def _cell(v: Any) -> str:
    if isinstance(v, Plain):
        return str(int(v))
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.2f}"
    if v is None:
        return "-"
    return str(v)


def _rich_table(title: str | None, headers: Sequence[str], rows: Sequence[Sequence[Any]]):
    from rich.table import Table  # optional dependency
    from rich.text import Text

    # Text(...) and not str: token text like "[b]" must not be read as rich markup
    table = Table(title=Text(title) if title else None, show_edge=False, header_style="bold")
    for h, numeric in zip(headers, _numeric_columns(rows, len(headers))):
        table.add_column(Text(h), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(Text(_cell(v)) for v in row))
    return table


def plain(v: int | None) -> Plain | None:
    """``v`` as a :class:`Plain` (no thousands separators), None stays None."""
    return None if v is None else Plain(v)


def bytes_json(b: bytes) -> dict[str, Any]:
    """Token bytes for JSON output: hex and their text."""
    return {"hex": b.hex(), "text": show_bytes(b)}


def per(num: float, den: float) -> float:
    """``num / den``, or 0.0 when ``den`` is 0 (a rate over an empty text)."""
    return num / den if den else 0.0


class PerToken:
    """Rates shared by the rows that count bytes, characters and tokens
    (``bytepair.inspect``'s sweep, comparison and evaluation rows, and
    ``bytepair.parity``'s rows)."""

    bytes: int
    chars: int
    tokens: int

    @property
    def bytes_per_token(self) -> float:
        return per(self.bytes, self.tokens)

    @property
    def chars_per_token(self) -> float:
        return per(self.chars, self.tokens)

    @property
    def tokens_per_byte(self) -> float:
        return per(self.tokens, self.bytes)

    @property
    def tokens_per_char(self) -> float:
        return per(self.tokens, self.chars)


class TableResult:
    """Shared rendering: subclasses define ``_table()`` -> (title, headers, rows)."""

    def _table(self) -> tuple[str | None, list[str], list[list[Any]]]:  # pragma: no cover
        raise NotImplementedError

    def to_text(self) -> str:
        """A plain-text rendering (what the CLI prints when piped)."""
        title, headers, rows = self._table()
        body = format_table(headers, rows)
        return f"{title}\n{body}" if title else body

    def __rich__(self):
        title, headers, rows = self._table()
        return _rich_table(title, headers, rows)

    def __str__(self) -> str:
        return self.to_text()


__all__ = ["PerToken", "Plain", "TableResult", "bytes_json", "display_width", "format_table", "is_complete_utf8", "per", "plain", "show_bytes", "show_token", "visible"]
