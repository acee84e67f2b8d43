"""Pictures of inspection results, drawn with matplotlib (the optional extra
``pip install 'bytepair[plot]'``).

Figures are built with matplotlib's object API on the Agg canvas, never through
``pyplot``, so plotting changes no global state (backend, open figures) of the
calling program. Files are written atomically.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from ..atomic import atomic_write_bytes
from ..errors import ArgumentError, MissingExtraError

if TYPE_CHECKING:  # pragma: no cover
    from ..inspect.compare import Comparison
    from ..inspect.parity import ParityReport
    from ..inspect.trace import Sweep

PathLike = Union[str, "os.PathLike[str]"]

# Fonts tried first for labels outside Latin/Greek/Cyrillic (Korean, Japanese,
# Chinese); any other installed font that covers the label's characters is used next.
_PREFERRED_FONTS = [
    "Noto Sans CJK KR", "Noto Sans KR", "NanumGothic", "Malgun Gothic", "Apple SD Gothic Neo",
    "AppleGothic", "UnDotum", "Baekmuk Gulim", "Source Han Sans KR", "Noto Sans CJK JP",
    "Noto Sans CJK SC", "Arial Unicode MS",
]


def require_matplotlib() -> None:
    """Raises MissingExtraError (how to install it) when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise MissingExtraError(
            "plotting needs matplotlib, which is not installed: pip install 'bytepair[plot]'"
        ) from e


def new_figure(width: float, height: float):
    """A matplotlib Figure on its own Agg canvas (no pyplot, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig, path: PathLike) -> None:
    """Writes ``fig`` atomically, in the format its file extension names (default PNG)."""
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "png"
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    atomic_write_bytes(path, buf.getvalue())


def _charmap(path: str) -> Mapping[int, Any]:
    from matplotlib.ft2font import FT2Font

    try:
        return FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip it
        return {}


def _missing_from_default(labels: Sequence[str]) -> set[int]:
    """Code points of ``labels`` that matplotlib's default font cannot draw."""
    from matplotlib import font_manager

    default = _charmap(font_manager.findfont("DejaVu Sans"))
    return {ord(ch) for s in labels for ch in s if ord(ch) not in default and not ch.isspace()}


def _font_covering(needed: set[int]) -> str | None:
    """The file of an installed font that has every code point in ``needed``."""
    from matplotlib import font_manager

    entries = sorted(
        font_manager.fontManager.ttflist,
        key=lambda f: (_PREFERRED_FONTS.index(f.name) if f.name in _PREFERRED_FONTS else len(_PREFERRED_FONTS)),
    )
    checked: set[str] = set()
    for f in entries:
        # LastResort maps every code point to a "missing glyph" box: it covers nothing
        if f.fname in checked or "last resort" in f.name.lower():
            continue
        checked.add(f.fname)
        if needed.issubset(_charmap(f.fname)):
            return str(f.fname)
    return None


def labels_and_font(labels: Sequence[str]) -> tuple[list[str], str | None, bool]:
    """Labels that can be drawn, an extra font to draw them with (None: the default
    is enough), and whether some labels had to be replaced by ``text N`` because
    no installed font has their characters."""
    needed = _missing_from_default(labels)
    if not needed:
        return list(labels), None, False
    font = _font_covering(needed)
    if font is not None:
        return list(labels), font, False
    out = [f"text {i + 1}" if any(ord(ch) in needed for ch in s) else s for i, s in enumerate(labels)]
    return out, None, True


def _short(s: str, width: int = 22) -> str:
    s = s.replace("\n", " ")
    return s if len(s) <= width else s[: width - 1] + "…"


def plot_sweep(sweep: Sweep, path: PathLike, *, title: str | None = None) -> None:
    """Draws tokens of the evaluation text and vocab size against the number of
    merges (two y axes) and writes the picture (PNG, SVG or PDF by extension)."""
    require_matplotlib()
    rows = sweep.rows
    if not rows:
        raise ArgumentError("the sweep has no rows to plot", name="sweep")
    merges = [r.merges for r in rows]
    fig = new_figure(7.5, 4.4)
    ax = fig.add_subplot()
    ax.plot(merges, [r.tokens for r in rows], marker="o", color="tab:blue", label="tokens of the text")
    positive = [m for m in merges if m > 0]
    if positive and max(positive) / min(positive) > 30:
        # sizes spread over decades (e.g. 0..50,000 merges): a log axis keeps the
        # steep start readable; symlog because 0 merges is a valid point
        ax.set_xscale("symlog", linthresh=min(positive))
        ax.set_xlabel("merges (log scale)")
    else:
        ax.set_xlabel("merges")
    from matplotlib.ticker import FuncFormatter

    thousands = FuncFormatter(lambda v, _pos: f"{v:,.0f}")
    ax.xaxis.set_major_formatter(thousands)
    ax.yaxis.set_major_formatter(thousands)
    ax.margins(y=0.12)
    ax.set_ylabel("tokens of the evaluation text", color="tab:blue")
    ax.tick_params(axis="y", labelcolor="tab:blue")
    ax.grid(True, alpha=0.3)
    if len(rows) <= 12:
        for k, r in enumerate(rows):
            last = k == len(rows) - 1  # keep the last label inside the axes
            ax.annotate(f"{r.bytes_per_token:.2f} B/tok", (r.merges, r.tokens), textcoords="offset points",
                        xytext=(-4 if last else 4, 6), ha="right" if last else "left", fontsize=8,
                        color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(merges, [r.vocab_size for r in rows], marker="s", linestyle="--", color="tab:orange",
             label="vocab size")
    ax2.set_ylabel("vocab size", color="tab:orange")
    ax2.yaxis.set_major_formatter(thousands)
    ax2.tick_params(axis="y", labelcolor="tab:orange")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles, [str(h.get_label()) for h in handles], loc="upper center", fontsize=9)
    ax.set_title(title or f"{sweep.tokenizer}: fewer tokens as merges grow the vocabulary")
    save_figure(fig, path)


def plot_compare(comparison: Comparison, path: PathLike, *, title: str | None = None) -> None:
    """Draws bytes per token for every text (e.g. language) and tokenizer as grouped
    bars, each labelled with its token count, and writes the picture."""
    require_matplotlib()
    texts, toks = comparison.texts, comparison.tokenizers
    labels, font, replaced = labels_and_font([_short(t) for t in texts])
    fig = new_figure(max(6.0, 1.6 + 1.1 * len(texts) * max(1, len(toks)) ** 0.5 * 1.4), 4.6)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(toks))
    top = 0.0
    for j, name in enumerate(toks):
        xs, ys, counts = [], [], []
        for i, text in enumerate(texts):
            r = comparison.row(text, name)
            xs.append(i + (j - (len(toks) - 1) / 2) * width)
            ys.append(r.bytes_per_token)
            counts.append(r.tokens)
        bars = ax.bar(xs, ys, width * 0.95, label=name)
        ax.bar_label(bars, labels=[f"{c:,} tok" for c in counts], fontsize=8, padding=2)
        top = max([top] + ys)
    ax.set_xticks(range(len(texts)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a missing glyph warns; the labels were checked above
        if font:
            from matplotlib.font_manager import FontProperties

            ax.set_xticklabels(labels, fontproperties=FontProperties(fname=font))
        else:
            ax.set_xticklabels(labels)
    ax.set_ylim(0, top * 1.18 if top else 1)
    ax.set_ylabel("bytes per token (higher: fewer tokens)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=9)
    if replaced:
        ax.set_xlabel("(no installed font shows these texts' characters; numbered in order)", fontsize=8)
    ax.set_title(title or "Bytes per token by text and tokenizer")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        save_figure(fig, path)


def plot_parity(report: ParityReport, path: PathLike, *, title: str | None = None) -> None:
    """Draws each language's cost relative to the first, per tokenizer, as grouped
    bars labelled with the Gini coefficient, and writes the picture (needs matplotlib)."""
    require_matplotlib()
    langs, toks = report.languages, report.tokenizers
    labels, font, _ = labels_and_font(langs)
    fig = new_figure(max(6.0, 1.5 + 0.9 * len(langs) * max(1, len(toks)) ** 0.5), 4.4)
    ax = fig.add_subplot()
    width = 0.8 / len(toks)
    for j, t in enumerate(toks):
        xs = [i + (j - (len(toks) - 1) / 2) * width for i in range(len(langs))]
        ys = [report.relative(t, g) for g in langs]
        ax.bar(xs, ys, width * 0.95, label=f"{t} (Gini {report.gini(t):.3f})")
    ax.axhline(1.0, color="black", linewidth=0.8, alpha=0.6)
    ax.set_xticks(range(len(langs)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if font:
            from matplotlib.font_manager import FontProperties

            ax.set_xticklabels(labels, fontproperties=FontProperties(fname=font))
        else:
            ax.set_xticklabels(labels)
    unit = {"bytes": "tokens per byte", "chars": "tokens per character", "tokens": "tokens"}[report.unit]
    ax.set_ylabel(f"{unit}, relative to {langs[0]}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=9)
    ax.set_title(title or "Cost per language (lower is cheaper; 1.0 = the first language)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        save_figure(fig, path)


__all__ = ["MissingExtraError", "labels_and_font", "new_figure", "plot_compare", "plot_parity", "plot_sweep", "require_matplotlib", "save_figure"]
