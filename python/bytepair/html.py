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
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:  # pragma: no cover
    from .inspect import Pieces

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
.p { outline: 2px dashed #c62828; outline-offset: -2px; }
.s { background: #444; color: #fff; }
.nl { color: #999; }
.hex { font-size: 0.75em; color: #8b0000; }
"""


def pieces_html(p: Pieces, *, title: str | None = None) -> str:
    """The page as a string."""
    spans: list[str] = []
    n_partial = 0
    # byte offset -> the character covering it, to name the character a partial token belongs to
    owner: list[str] = []
    for ch in p.text:
        owner.extend([ch] * len(ch.encode("utf-8")))
    for piece in p.pieces:
        classes = ["t", f"c{piece.index % 5}"]
        complete = piece.complete
        if piece.special:
            classes.append("s")
        if not complete:
            classes.append("p")
            n_partial += 1
        tip = (f"#{piece.index} id {piece.id} · bytes {piece.bytes.hex(' ')} · offset {piece.start}"
               + (" · special" if piece.special else "")
               + ("" if complete else " · partial UTF-8: part of a character"
                  + _part_of(owner, piece.start, len(piece.bytes))))
        if complete:
            body = _html.escape(piece.text).replace("\n", '<span class="nl">↵</span>\n')
        else:
            body = '<span class="hex">' + _html.escape(piece.bytes.decode("utf-8", "backslashreplace")) + "</span>"
        spans.append(f'<span class="{" ".join(classes)}" title="{_html.escape(tip, quote=True)}">{body}</span>')
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
        '<div class="legend"><span><span class="t c0">token</span><span class="t c1">boundaries</span>'
        " alternate colours; hover for the id</span>"
        '<span><span class="t c0 p"><span class="hex">\\xed</span></span> partial UTF-8 (bytes shown)</span>'
        '<span><span class="t s">special</span> special token</span></div>\n'
        f'<p class="text">{"".join(spans)}</p>\n'
        "</body>\n</html>\n"
    )


def _part_of(owner: list[str], start: int, n: int) -> str:
    chars = "".join(dict.fromkeys(owner[start : start + n]))
    return f" ({chars})" if chars else ""


def write_pieces_html(p: Pieces, path: PathLike, *, title: str | None = None) -> None:
    """Writes :func:`pieces_html` to ``path`` (atomic)."""
    from ._io import atomic_write_text

    atomic_write_text(path, pieces_html(p, title=title))


__all__ = ["pieces_html", "write_pieces_html"]
