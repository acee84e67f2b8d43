"""Shared fixtures: real-text excerpts (tests/data) and tiktoken reference
encodings built from the rank files bundled in bytepair (no network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
CORPORA = ["en_austen.txt", "en_kjv.txt", "en_pydocs.txt", "code_python.txt", "ko_prose.txt", "multi_unicode.txt"]
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
#: BYTEPAIR_HYPOTHESIS_SCALE multiplies every property test's max_examples (long runs, docs/reliability.md).
HYPOTHESIS_SCALE = int(os.environ.get("BYTEPAIR_HYPOTHESIS_SCALE", "1"))


def corpus(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def corpora() -> dict:
    return {name: corpus(name) for name in CORPORA}


def tiktoken_encoding(name: str):
    """A real ``tiktoken.Encoding`` built offline from bytepair's bundled rank file
    (skips the test when tiktoken is not installed)."""
    pytest.importorskip("tiktoken")
    from bytepair import registry

    return registry.tiktoken_encoding(name)


def no_panic(fn, *args, **kwargs):
    """Calls ``fn``; a Rust panic reaching Python (pyo3_runtime.PanicException,
    a BaseException) fails the test with the arguments that caused it."""
    try:
        return fn(*args, **kwargs)
    except BaseException as e:
        if type(e).__name__ == "PanicException" or type(e).__module__ == "pyo3_runtime":
            pytest.fail(f"Rust panic reached Python: {e!r} on {args!r:.300}")
        raise


# hypothesis: no example database in the working directory; deterministic in CI
try:
    import tempfile

    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(tempfile.mkdtemp(prefix="bytepair-hypothesis-"))

    settings.register_profile("bytepair", database=None, derandomize=True, deadline=None, print_blob=True)
    settings.load_profile("bytepair")
except ImportError:  # pragma: no cover
    pass
