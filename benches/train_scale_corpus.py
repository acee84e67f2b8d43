"""Builds the real corpora of ``bench_train_scale.py`` from Debian packages.

    python benches/train_scale_corpus.py [--out DIR] [--large]

* ``linux_1g.txt`` (~1.2 GB): the Linux 6.1 source tree from Debian's
  ``linux-source-6.1`` (C, headers, reST docs, scripts, Kconfig): every UTF-8
  text file in sorted path order, one document each, separated by a blank line.
* ``multi_cjk.txt``: the text of LibreOffice's help pages in Japanese, Chinese
  (simplified and traditional), Korean, Khmer, Dzongkha, Hindi, Russian, Greek
  and Vietnamese (HTML tags and entities removed, each page once), plus the
  Thai and Arabic hunspell word lists: many distinct chunks, no repeated files.
* ``large_3g.txt`` (with ``--large``; 3,393,135,558 bytes, 3,529,668 distinct
  GPT-2 chunks): the source and documentation of fourteen projects, each from
  its own Debian package (the Debian 12 versions it was built from):

  ====================  ==========================  =============================
  package               version                     text taken
  ====================  ==========================  =============================
  linux-source-6.1      6.1.192-3                   the whole Linux tree
  gcc-12-source         12.2.0-14+deb12u1           GCC and Modula-2, minus libgo/
  binutils-source       2.40-2                      bfd, gas, ld, gold, opcodes...
  gdb-source            13.1-3                      gdb/, gdbserver/, gdbsupport/,
                                                    sim/
  glibc-source          2.36-9+deb12u14             the whole tree
  openjdk-17-source     17.0.21.1+2-1~deb12u1       the class library (src.zip)
  rust-src              1.63.0+dfsg1-2              compiler, library, docs
  golang-1.19-src       1.19.8-2                    the Go tree
  fpc-source-3.2.2      3.2.2+dfsg-20               Free Pascal
  libboost1.81-dev      1.81.0-5+deb12u1            the Boost headers
  python3.11-doc        3.11.2-6+deb12u9            the HTML and text docs
  racket-common         8.7+dfsg1-1                 Racket's collections
  erlang-src            1:25.2.3+dfsg-1+deb12u4     Erlang/OTP sources
  perl-doc              5.36.0-7+deb12u4            the POD manuals
  ====================  ==========================  =============================

  Every UTF-8 text file of each package (the source tarballs under
  ``/usr/src`` and OpenJDK's ``src.zip`` read member by member), in sorted
  path order within a package, packages in the order above, one document per
  file separated by a blank line, each distinct file content once. Copies of
  another listed project are left out, so no project's text appears twice in
  two versions: GCC's libgo is Go's library, and binutils and gdb keep only
  their own directories (the top-level build files, libiberty and zlib they
  share with GCC come from GCC; bfd and opcodes, shared by the two, from
  binutils). Disk: 0.5 GB of packages, 1.7 GB unpacked, and one tarball at
  a time (at most 1.5 GB) in ``scratch/`` while it is read.

Downloads with ``apt-get download`` and unpacks with ``dpkg-deb -x`` into
``$BYTEPAIR_DATA/scale`` (default ``~/.cache/bytepair-data/scale``); nothing is
installed. Idempotent.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import html
import os
import re
import shutil
import subprocess
import tarfile
import urllib.parse
import zipfile
from collections.abc import Iterator
from pathlib import Path

HELP_LANGS = ["ja", "zh-cn", "zh-tw", "ko", "km", "dz", "hi", "ru", "el", "vi"]
DEBS = ["linux-source-6.1", "hunspell-th", "hunspell-ar"] + [f"libreoffice-help-{x}" for x in HELP_LANGS]
LINUX_LIMIT = 1_200_000_000
# (package, archive members kept, archive members dropped): paths inside a
# package's tarball or zip, below the archive's top directory. The filters
# drop the copies one project bundles of another project listed here.
LARGE = [
    ("linux-source-6.1", (), ()),
    ("gcc-12-source", (), ("libgo/",)),
    ("binutils-source", ("bfd/", "binutils/", "cpu/", "elfcpp/", "gas/", "gold/", "gprof/", "gprofng/",
                         "include/", "ld/", "libctf/", "libsframe/", "opcodes/"), ()),
    ("gdb-source", ("gdb/", "gdbserver/", "gdbsupport/", "sim/"), ()),
    ("glibc-source", (), ()),
    ("openjdk-17-source", (), ()),
    ("rust-src", (), ()),
    ("golang-1.19-src", (), ()),
    ("fpc-source-3.2.2", (), ()),
    ("libboost1.81-dev", (), ()),
    ("python3.11-doc", (), ()),
    ("racket-common", (), ()),
    ("erlang-src", (), ()),
    ("perl-doc", (), ()),
]
# The source archives a package ships (other archives, such as Go's test
# data, are binary files like any other).
SOURCE_ARCHIVE = re.compile(r"usr/src/.*\.tar\.(xz|gz|bz2)|usr/lib/jvm/[^/]+/lib/src\.zip")
TAG = re.compile(r"<[^>]*>")
SPACE = re.compile(r"[ \t]*\n[ \t\n]*")


def fetch(base: Path, debs: list[str]) -> Path:
    deb, ex = base / "deb", base / "ex"
    deb.mkdir(parents=True, exist_ok=True)
    need = [p for p in debs if not glob.glob(str(deb / f"{p}_*.deb"))]
    if need:
        subprocess.run(["apt-get", "download", *need], cwd=deb, check=True)
    for p in debs:
        if not (ex / p).is_dir():
            (f,) = glob.glob(str(deb / f"{p}_*.deb"))
            subprocess.run(["dpkg-deb", "-x", f, str(ex / p)], check=True)
    return ex


def is_text(raw: bytes) -> bool:
    if not raw or b"\0" in raw:
        return False
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
            if not is_text(raw):
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


def version(base: Path, package: str) -> str:
    (f,) = glob.glob(str(base / "deb" / f"{package}_*.deb"))
    return urllib.parse.unquote(Path(f).name.split("_")[1])


def sorted_files(root: Path) -> list[Path]:
    """Regular files below ``root`` (symlinks not followed), in sorted path order."""
    found = [Path(d, n) for d, _, names in os.walk(root) for n in names]
    return sorted((p for p in found if p.is_file() and not p.is_symlink()),
                  key=lambda p: p.relative_to(root).as_posix())


def wanted(member: str, keep: tuple[str, ...], drop: tuple[str, ...]) -> bool:
    inner = member.split("/", 1)[-1]
    return (not keep or inner.startswith(keep)) and not inner.startswith(drop)


def archive(path: Path, scratch: Path, keep: tuple[str, ...], drop: tuple[str, ...]) -> Iterator[bytes]:
    """The members of a tarball or zip, in sorted path order."""
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(path) as z:
            for name in sorted(n for n in z.namelist() if not n.endswith("/") and wanted(n, keep, drop)):
                yield z.read(name)
        return
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    subprocess.run(["tar", "-x", "--no-same-owner", "-f", str(path), "-C", str(scratch)], check=True)
    for f in sorted_files(scratch):
        if wanted(f.relative_to(scratch).as_posix(), keep, drop):
            yield f.read_bytes()
    shutil.rmtree(scratch)


def large(ex: Path, out: Path) -> None:
    seen: set[bytes] = set()
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        for package, keep, drop in LARGE:
            for path in sorted_files(ex / package):
                if SOURCE_ARCHIVE.fullmatch(path.relative_to(ex / package).as_posix()):
                    docs = archive(path, out.parent / "scratch", keep, drop)
                else:
                    docs = iter([path.read_bytes()])
                for raw in docs:
                    if not is_text(raw) or not raw.strip():
                        continue
                    digest = hashlib.blake2b(raw, digest_size=16).digest()
                    if digest not in seen:
                        seen.add(digest)
                        f.write(raw.rstrip(b"\n") + b"\n\n")
            print(f"  {package}: up to {f.tell():,} bytes", flush=True)
    os.replace(tmp, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("BYTEPAIR_DATA", Path.home() / ".cache/bytepair-data")) / "scale"
    ap.add_argument("--out", type=Path, default=default)
    ap.add_argument("--large", action="store_true", help="also build large_3g.txt from the packages of LARGE")
    a = ap.parse_args()
    debs = DEBS + [p for p, _, _ in LARGE if p not in DEBS] if a.large else DEBS
    ex = fetch(a.out, debs)
    builds = [("linux_1g.txt", linux), ("multi_cjk.txt", multi)]
    if a.large:
        for p, keep, drop in LARGE:
            print(f"{p} {version(a.out, p)}" + "".join(f" {k}" for k in keep) + "".join(f" -{d}" for d in drop))
        builds.append(("large_3g.txt", large))
    for name, build in builds:
        if not (a.out / name).exists():
            build(ex, a.out / name)
        print(f"{a.out / name}: {(a.out / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
