"""Plain text of LibreOffice's help pages in one language: real European prose
(French, German, ...) for the encoders, where the six corpora have none.

The pages come from Debian's ``libreoffice-help-<lang>`` packages::

    apt-get download libreoffice-help-fr libreoffice-help-de
    dpkg-deb -x libreoffice-help-fr_*.deb /tmp/lo-fr
    python benches/experiments/help_pages_text.py /tmp/lo-fr fr > /tmp/fr.txt

Each page's text without its tags, scripts and styles, entities decoded, runs
of spaces and blank lines collapsed; pages in path order, the first ``--mb`` MB
(cut at a character boundary). A text file of any corpus works wherever
``ab_model.py`` takes a corpus (a path instead of a name).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

TAGS = re.compile(r"(?s)<script.*?</script>|<style.*?</style>|<[^>]+>")


def page_text(raw: str) -> str:
    text = html.unescape(TAGS.sub(" ", raw))
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r"\n\s*\n+", "\n", text).strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", type=Path, help="where the package was extracted (dpkg-deb -x)")
    ap.add_argument("lang", help="the language code of the package (fr, de, ...)")
    ap.add_argument("--mb", type=float, default=2.0)
    args = ap.parse_args()
    pages = sorted((args.root / "usr/share/libreoffice/help" / args.lang / "text").rglob("*.html"))
    if not pages:
        sys.exit(f"no help pages under {args.root} for {args.lang!r}")
    text = "\n".join(page_text(p.read_text(encoding="utf-8", errors="ignore")) for p in pages)
    sys.stdout.write(text.encode()[: int(args.mb * 1e6)].decode("utf-8", "ignore"))


if __name__ == "__main__":
    main()
