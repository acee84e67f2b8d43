"""The API reference shows the public API and only it: ``scripts/check_api_docs.py``
reads a built site's inventory (``objects.inv``). CI runs the script on the site
it builds; here the check itself is tested on inventories written by hand, and
run on a site built into a temporary folder when mkdocs is installed (the test
extra does not install it: the docs extra does)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_api_docs", ROOT / "scripts" / "check_api_docs.py")
assert _spec is not None and _spec.loader is not None
check_api_docs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_api_docs)


def _site(tmp_path: Path, entries: list[str]) -> Path:
    head = b"# Sphinx inventory version 2\n# Project: t\n# Version: 0\n# The remainder of this file is compressed using zlib.\n"
    (tmp_path / "objects.inv").write_bytes(head + zlib.compress("\n".join(entries).encode() + b"\n"))
    return tmp_path


GOOD = [
    "bytepair.train py:function 1 api/functions/#$ -",
    "bytepair.Tokenizer py:class 1 api/tokenizer/#$ -",
    "bytepair.Tokenizer.encode py:method 1 api/tokenizer/#$ -",
    # aliases: private spellings that point at a public object render nothing
    "bytepair.parity._patterns py:module 2 api/patterns/#bytepair.patterns -",
    "bytepair.training.train py:function 2 api/functions/#bytepair.train -",
]


def test_a_complete_inventory_passes(tmp_path):
    assert check_api_docs.problems(_site(tmp_path, GOOD), ["train", "Tokenizer"], ["encode"]) == []


def test_a_missing_public_name_or_member_fails(tmp_path):
    found = check_api_docs.problems(_site(tmp_path, GOOD), ["train", "Tokenizer", "shrink"], ["encode", "decode"])
    assert found == ["bytepair.shrink (in bytepair.__all__) has no entry",
                     "bytepair.Tokenizer.decode (a public attribute) has no entry"]


def test_a_rendered_private_or_internal_name_fails(tmp_path):
    site = _site(tmp_path, [*GOOD, "bytepair.Tokenizer._from_core py:method 1 api/tokenizer/#$ -",
                            "bytepair.training.counting_share py:function 1 api/functions/#$ -",
                            "bytepair.Tokenizer.__eq__ py:method 1 api/tokenizer/#$ -"])
    found = check_api_docs.problems(site, ["train"], [])
    assert found == ["bytepair.Tokenizer._from_core is private but rendered",
                     ("bytepair.training.counting_share is rendered but internal "
                      "(helpers of bytepair.train for bytepair's own tools)")]


def test_a_file_that_is_not_an_inventory_is_refused(tmp_path):
    (tmp_path / "objects.inv").write_bytes(b"<html>")
    with pytest.raises(ValueError, match="not a Sphinx inventory"):
        check_api_docs.read_inventory(tmp_path / "objects.inv")


def test_the_built_site_shows_the_api(tmp_path):
    for module in ("mkdocs", "mkdocstrings", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the docs extra); CI runs scripts/check_api_docs.py on its build")
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(site)], cwd=ROOT,
                           capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr
    assert check_api_docs.check(site) == []
