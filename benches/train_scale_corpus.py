"""Builds the real corpora of ``bench_train_scale.py`` from Debian packages.

    python benches/train_scale_corpus.py [--out DIR]

* ``linux_1g.txt`` (~1.2 GB): the Linux 6.1 source tree from Debian's
  ``linux-source-6.1`` (C, headers, reST docs, scripts, Kconfig): every UTF-8
  text file in sorted path order, one document each, separated by a blank line.
* ``multi_cjk.txt``: the text of LibreOffice's help pages in Japanese, Chinese
  (simplified and traditional), Korean, Khmer, Dzongkha, Hindi, Russian, Greek
  and Vietnamese (HTML tags and entities removed, each page once), plus the
  Thai and Arabic hunspell word lists: many distinct chunks, no repeated files.

Downloads with ``apt-get download`` and unpacks with ``dpkg-deb -x`` into
``$BYTEPAIR_DATA/scale`` (default ``~/.cache/bytepair-data/scale``); nothing is
installed. Idempotent.
"""

from __future__ import annotations

import argparse
import glob
import html
import os
import re
import subprocess
import tarfile
from pathlib import Path

HELP_LANGS = ["ja", "zh-cn", "zh-tw", "ko", "km", "dz", "hi", "ru", "el", "vi"]
DEBS = ["linux-source-6.1", "hunspell-th", "hunspell-ar"] + [f"libreoffice-help-{x}" for x in HELP_LANGS]
LINUX_LIMIT = 1_200_000_000
TAG = re.compile(r"<[^>]*>")
SPACE = re.compile(r"[ \t]*\n[ \t\n]*")


def fetch(base: Path) -> Path:
    deb, ex = base / "deb", base / "ex"
    deb.mkdir(parents=True, exist_ok=True)
    need = [p for p in DEBS if not glob.glob(str(deb / f"{p}_*.deb"))]
    if need:
        subprocess.run(["apt-get", "download", *need], cwd=deb, check=True)
    for p in DEBS:
        if not (ex / p).is_dir():
            (f,) = glob.glob(str(deb / f"{p}_*.deb"))
            subprocess.run(["dpkg-deb", "-x", f, str(ex / p)], check=True)
    return ex


def linux(ex: Path, out: Path) -> None:
    (tar,) = glob.glob(str(ex / "linux-source-6.1/usr/src/linux-source-*.tar.xz"))
    tmp = out.with_suffix(".tmp")
    size = 0
    with tarfile.open(tar) as tf, open(tmp, "wb") as f:
        members = sorted((m for m in tf if m.isfile()), key=lambda m: m.name)
        for m in members:
            fh = tf.extractfile(m)
            if fh is None:
                continue
            raw = fh.read()
            if not raw or b"\0" in raw:
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            f.write(raw.rstrip(b"\n") + b"\n\n")
            size += len(raw) + 2
            if size >= LINUX_LIMIT:
                break
    os.replace(tmp, out)


def multi(ex: Path, out: Path) -> None:
    tmp = out.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for lang in HELP_LANGS:
            pages = sorted(glob.glob(str(ex / f"libreoffice-help-{lang}/usr/share/libreoffice/help/*/text/**/*.html"),
                                     recursive=True))
            for page in pages:
                text = Path(page).read_text(encoding="utf-8", errors="replace")
                body = text.split("<body", 1)[-1]
                body = SPACE.sub("\n", html.unescape(TAG.sub(" ", body))).strip()
                if body:
                    f.write(body + "\n\n")
        for dic in ["hunspell-th/usr/share/hunspell/th_TH.dic", "hunspell-ar/usr/share/hunspell/ar.dic"]:
            words = (ex / dic).read_text(encoding="utf-8", errors="replace").splitlines()[1:]
            f.write(" ".join(w.split("/", 1)[0] for w in words) + "\n\n")
    os.replace(tmp, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache/bytepair-data")) / "scale"
    ap.add_argument("--out", type=Path, default=default)
    a = ap.parse_args()
    ex = fetch(a.out)
    for name, build in (("linux_1g.txt", linux), ("multi_cjk.txt", multi)):
        if not (a.out / name).exists():
            build(ex, a.out / name)
        print(f"{a.out / name}: {(a.out / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
