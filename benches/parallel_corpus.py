"""Builds a near-parallel corpus from the LibreOffice 7.4 help (Debian packages
``libreoffice-help-{en-us,ko,ja,zh-cn,ru,hi}``, MPL-2.0): the same help page in
each language, paragraph by paragraph, kept only where every language has the
same number of paragraphs and each translated paragraph is mostly in its
script. Line ``i`` of every file is then the same paragraph in each language.

Writes ``$BYTEPAIR_DATA/parallel/{en,ko,ja,zh,ru,hi}.txt`` (default
``~/.cache/bytepair-data``); downloads missing packages with ``apt-get download``
into ``$BYTEPAIR_DATA/dl/deb``. Nothing here is committed to the repository.

    python benches/parallel_corpus.py
"""

from __future__ import annotations

import html.parser
import os
import re
import subprocess
import sys
from pathlib import Path

DATA = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache" / "bytepair-data"))
LANGS = {"en": "en-US", "ko": "ko", "ja": "ja", "zh": "zh-CN", "ru": "ru", "hi": "hi"}
PACKAGES = {"en": "en-us", "ko": "ko", "ja": "ja", "zh": "zh-cn", "ru": "ru", "hi": "hi"}
SCRIPTS = {
    "ko": lambda c: "\uac00" <= c <= "\ud7a3",
    "ja": lambda c: "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff",
    "zh": lambda c: "\u4e00" <= c <= "\u9fff",
    "ru": lambda c: "\u0400" <= c <= "\u04ff",
    "hi": lambda c: "\u0900" <= c <= "\u097f",
}
BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "pre", "div", "br", "tr"}


class Paragraphs(html.parser.HTMLParser):
    """Text of block elements after the page's ``id="DisplayArea"`` element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.on = False
        self.skip = 0
        self.buf: list[str] = []
        self.out: list[str] = []

    def _flush(self) -> None:
        s = " ".join("".join(self.buf).split())
        if s and self.on:
            self.out.append(s)
        self.buf = []

    def handle_starttag(self, tag, attrs):
        if dict(attrs).get("id") == "DisplayArea":
            self.on = True
        if tag in ("script", "style", "head"):
            self.skip += 1
        if tag in BLOCKS:
            self._flush()

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        if tag in BLOCKS:
            self._flush()

    def handle_data(self, data):
        if not self.skip:
            self.buf.append(data)


def paragraphs(path: Path) -> list[str]:
    p = Paragraphs()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    p.close()
    p._flush()
    return p.out


def help_root(lang: str) -> Path:
    pkg = f"libreoffice-help-{PACKAGES[lang]}"
    ex = DATA / "dl" / "deb" / "ex" / pkg
    root = ex / "usr/share/libreoffice/help" / LANGS[lang] / "text"
    if root.is_dir():
        return root
    deb_dir = DATA / "dl" / "deb"
    deb_dir.mkdir(parents=True, exist_ok=True)
    debs = sorted(deb_dir.glob(f"{pkg}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", pkg], cwd=deb_dir, check=True)
        debs = sorted(deb_dir.glob(f"{pkg}_*.deb"))
    ex.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(ex)], check=True)
    return root


def translated(lang: str, s: str) -> bool:
    if lang == "en":
        return True
    letters = [c for c in s if c.isalpha()]
    return bool(letters) and sum(map(SCRIPTS[lang], letters)) >= 0.5 * len(letters)


def build() -> dict[str, list[str]]:
    roots = {g: help_root(g) for g in LANGS}
    pages = sorted(p.relative_to(roots["en"]) for p in roots["en"].rglob("*.html"))
    out: dict[str, list[str]] = {g: [] for g in LANGS}
    for rel in pages:
        if not all((roots[g] / rel).is_file() for g in LANGS):
            continue
        paras = {g: paragraphs(roots[g] / rel) for g in LANGS}
        if len({len(v) for v in paras.values()}) != 1:
            continue
        for i in range(len(paras["en"])):
            row = {g: paras[g][i].removeprefix("Title is:").strip() for g in LANGS}
            if len(row["en"]) < 20 or not re.search("[A-Za-z]{3}", row["en"]):
                continue
            if all(translated(g, row[g]) for g in LANGS):
                for g in LANGS:
                    out[g].append(row[g])
    return out


def main() -> int:
    out = build()
    folder = DATA / "parallel"
    folder.mkdir(parents=True, exist_ok=True)
    for g, lines in out.items():
        (folder / f"{g}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        size = sum(len(s.encode()) for s in lines)
        print(f"{folder / f'{g}.txt'}: {len(lines):,} paragraphs, {size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
