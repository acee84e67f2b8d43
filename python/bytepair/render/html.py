"""A self-contained HTML page of a text's tokens (``bytepair pieces --html``).

Every token is a ``<span>`` with an alternating background colour, its id, bytes
and position in the ``title`` attribute (shown on hover), and a dashed red frame
when the token is not a whole UTF-8 sequence on its own (a piece of a character).
No scripts, fonts or files are loaded from anywhere: the page works offline.

>>> from bytepair import get_encoding
>>> from bytepair.inspect import pieces
>>> page = pieces_html(pieces(get_encoding("gpt2"), "한 token"))
>>> 'title="#0 id 47991' in page, "partial UTF-8: part of a character" in page
(True, True)
"""

from __future__ import annotations

import html as _html
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

from ..atomic import atomic_write_text
from .text import is_complete_utf8, show_bytes

if TYPE_CHECKING:  # pragma: no cover
    from ..inspect.pieces import Piece, Pieces

PathLike = Union[str, "os.PathLike[str]"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.2em; }
.stats { color: #555; margin-bottom: 1em; }
.legend span { margin-right: 1.5em; }
.text { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 1.05em;
        line-height: 2.1; white-space: pre-wrap; word-break: break-all;
        border: 1px solid #ddd; padding: 0.8em; border-radius: 4px; }
.t { border-radius: 3px; padding: 0.1em 0; }
.c0 { background: #fde2a7; } .c1 { background: #b9e3f9; } .c2 { background: #c9f2c7; }
.c3 { background: #f7c6d9; } .c4 { background: #ddd3f5; }
.p { outline: 1px dashed #c62828; outline-offset: -1px; font-family: ui-monospace, monospace; }
ruby.g { ruby-position: over; outline: 2px dashed #c62828; outline-offset: 1px; border-radius: 3px;
         margin: 0 2px; }
rt { font-size: 0.55em; line-height: 1; }
.s { background: #444; color: #fff; }
.nl { color: #999; }
"""


def pieces_html(p: Pieces, *, title: str | None = None) -> str:
    """The page as a string.

    Tokens that are pieces of characters are grouped until the characters are
    complete; such a group shows its characters with the byte tokens above them
    (an HTML ruby annotation), so Korean or emoji stay readable while every token
    boundary is still visible.
    """
    n_partial = sum(1 for piece in p.pieces if not piece.complete)
    # the text, to name the characters a partial token belongs to (from its character span)
    owner = p.text
    out: list[str] = []
    for group in _groups(p.pieces):
        if len(group) == 1 and group[0].complete:
            out.append(_span(group[0], owner))
            continue
        text = b"".join(x.bytes for x in group).decode("utf-8", "replace")
        out.append('<ruby class="g">' + _text(text) + "<rt>" + "".join(_span(x, owner) for x in group)
                   + "</rt></ruby>")
    n_bytes = len(p.text.encode("utf-8"))
    heading = title or f"{p.tokenizer}: {len(p.pieces):,} tokens"
    stats = (f"{len(p.pieces):,} tokens · {n_bytes:,} bytes · {len(p.text):,} characters · "
             f"{n_bytes / len(p.pieces) if p.pieces else 0:.2f} bytes per token · "
             f"{n_partial:,} partial-UTF-8 tokens")
    return (
        "<!DOCTYPE html>\n<html lang=\"und\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{_html.escape(heading)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{_html.escape(heading)}</h1>\n"
        f'<div class="stats">{_html.escape(stats)}</div>\n'
        '<div class="legend"><span><span class="c0">token</span><span class="c1">boundaries</span>'
        " alternate colours; hover for the id</span>"
        '<span><ruby class="g">토<rt><span class="c0 p">\\xed</span><span class="c1 p">\\x86</span>'
        '<span class="c2 p">\\xa0</span></rt></ruby> tokens that are pieces of a character (bytes above)</span>'
        '<span><span class="s">special</span> special token</span></div>\n'
        f'<p class="text">{"".join(out)}</p>\n'
        "</body>\n</html>\n"
    )


def _groups(pieces: Sequence[Piece]) -> list[list[Piece]]:
    """Consecutive tokens, grouped until their bytes end on a character boundary."""
    groups: list[list[Piece]] = []
    cur: list[Piece] = []
    acc = b""
    for piece in pieces:
        cur.append(piece)
        acc += piece.bytes
        if is_complete_utf8(acc):  # text is valid UTF-8, so a group closes within a character
            groups.append(cur)
            cur, acc = [], b""
    if cur:
        groups.append(cur)
    return groups


def _text(s: str) -> str:
    return _html.escape(s).replace("\n", '<span class="nl">↵</span>\n')


def _span(piece: Piece, owner: str) -> str:
    classes = ["t", f"c{piece.index % 5}"]
    if piece.special:
        classes.append("s")
    if not piece.complete:
        classes.append("p")
    where = (f"characters {piece.chars[0]}-{piece.chars[1]}" if piece.chars is not None
             else f"offset {piece.start}")
    tip = (f"#{piece.index} id {piece.id} · bytes {piece.bytes.hex(' ')} · {where}"
           + (" · special" if piece.special else "")
           + ("" if piece.complete else " · partial UTF-8: part of a character" + _part_of(owner, piece)))
    body = _text(piece.text) if piece.complete else _html.escape(show_bytes(piece.bytes))
    return f'<span class="{" ".join(classes)}" title="{_html.escape(tip, quote=True)}">{body}</span>'


def _part_of(text: str, piece: Piece) -> str:
    if piece.chars is None:
        return ""
    chars = text[piece.chars[0] : piece.chars[1]]
    return f" ({chars})" if chars else ""


def write_pieces_html(p: Pieces, path: PathLike, *, title: str | None = None) -> None:
    """Writes :func:`pieces_html` to ``path`` (atomic)."""
    atomic_write_text(path, pieces_html(p, title=title))


__all__ = ["pieces_html", "write_pieces_html"]
