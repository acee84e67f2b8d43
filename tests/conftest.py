"""Shared fixtures: real-text excerpts (tests/data) and tiktoken reference
encodings built from the rank files bundled in bytepair (no network)."""

from __future__ import annotations

import atexit
import importlib
import io
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

DATA = Path(__file__).parent / "data"
CORPORA = ["en_austen.txt", "en_kjv.txt", "en_pydocs.txt", "code_python.txt", "ko_prose.txt", "multi_unicode.txt"]
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
#: BYTEPAIR_HYPOTHESIS_SCALE multiplies every property test's max_examples (long runs, docs/reliability.md).
HYPOTHESIS_SCALE = int(os.environ.get("BYTEPAIR_HYPOTHESIS_SCALE", "1"))
#: BYTEPAIR_REQUIRE_OPTIONAL=1 (set by .ci/run, whose environment has the ``test`` extra): a missing
#: optional dependency fails the tests that need it instead of skipping them.
REQUIRE_OPTIONAL = os.environ.get("BYTEPAIR_REQUIRE_OPTIONAL") == "1"

# A shell starts background commands with SIGINT ignored, and Python then
# never raises KeyboardInterrupt: the Ctrl-C tests need Python's own handler.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def optional(module: str) -> ModuleType:
    """Imports an optional dependency a test needs. When it is missing the test
    (or, called at module level, the module) is skipped, saying why; under
    BYTEPAIR_REQUIRE_OPTIONAL=1 it fails instead."""
    if not REQUIRE_OPTIONAL:
        return pytest.importorskip(module)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        pytest.fail(f"optional dependency {module} is missing ({e}); BYTEPAIR_REQUIRE_OPTIONAL=1 asks for it",
                    pytrace=False)


#: Where scripts/get-model-files.py puts the open models' tokenizer files.
MODELS_DIR = Path(os.environ.get("BYTEPAIR_DATA") or Path.home() / ".cache" / "bytepair-data") / "models"


def model_file(model: str, name: str = "tokenizer.json") -> Path:
    """A vendor's tokenizer file fetched by ``scripts/get-model-files.py``. When it
    is absent the test skips, saying how to fetch it; under
    BYTEPAIR_REQUIRE_OPTIONAL=1 (CI, which runs the script first) it fails."""
    path = MODELS_DIR / model / name
    if not path.is_file():
        why = f"{path} is missing: run `python scripts/get-model-files.py`"
        if REQUIRE_OPTIONAL:
            pytest.fail(why + " (BYTEPAIR_REQUIRE_OPTIONAL=1 asks for it)", pytrace=False)
        pytest.skip(why)
    return path


@pytest.fixture(scope="session")
def model_files():
    """:func:`model_file`, for tests that locate the open models' files."""
    return model_file


def corpus(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def corpora() -> dict:
    return {name: corpus(name) for name in CORPORA}


def tiktoken_encoding(name: str):
    """A real ``tiktoken.Encoding`` built offline from bytepair's bundled rank file
    (see :func:`optional` for a missing tiktoken)."""
    optional("tiktoken")
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


# Every temporary file of the run (this process and the commands it starts)
# goes to one directory of its own, so a leftover is seen and removed at the end.
# A process the run starts that imports this module (a worker unpickling a test's
# function) joins the run's directory instead of making one of its own. Each of
# pytest-xdist's workers is a run of its own: its own directory and mark, so one
# worker never counts the other, or the other's files, as left behind.
_XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_PARENT_TMP = os.environ.get("BYTEPAIR_TEST_TMP")
if _PARENT_TMP and Path(_PARENT_TMP).is_dir() and os.environ.get("BYTEPAIR_TEST_WORKER", "") == _XDIST_WORKER:
    SESSION_TMP = Path(_PARENT_TMP)
else:  # a worker's directory is beside the main process's, not in it (Ray's socket paths are short)
    _base = Path(_PARENT_TMP).parent if _PARENT_TMP else None
    SESSION_TMP = Path(tempfile.mkdtemp(prefix="bytepair-tests-", dir=_base))
    os.environ["BYTEPAIR_TEST_TMP"] = str(SESSION_TMP)
    os.environ["BYTEPAIR_TEST_WORKER"] = _XDIST_WORKER
    atexit.register(shutil.rmtree, SESSION_TMP, ignore_errors=True)
os.environ["TMPDIR"] = str(SESSION_TMP)
tempfile.tempdir = None
#: Marks every process the run starts (inherited), to find any left running.
SESSION_MARK = f"BYTEPAIR_TEST_SESSION={SESSION_TMP.name}"
os.environ["BYTEPAIR_TEST_SESSION"] = SESSION_TMP.name

# hypothesis: no example database in the working directory; deterministic in CI
set_hypothesis_home_dir(str(SESSION_TMP / "hypothesis"))
settings.register_profile("bytepair", database=None, derandomize=True, deadline=None, print_blob=True)
settings.load_profile("bytepair")


def run_cli(capsys, *argv, stdin=None, monkeypatch=None):
    """Runs the ``bytepair`` command in this process; returns (exit status,
    stdout, stderr). ``stdin`` (str or bytes) needs ``monkeypatch``."""
    from bytepair import cli

    if stdin is not None:
        assert monkeypatch is not None
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _processes_of_this_run() -> list:
    """Other live processes started by this run (their environment has the mark),
    but this process's own resource tracker (multiprocessing's: it ends with it)."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    found = []
    for d in Path("/proc").glob("[0-9]*"):
        if int(d.name) in (os.getpid(), tracker):
            continue
        try:
            env = (d / "environ").read_bytes().split(b"\0")
            if SESSION_MARK.encode() in env and (d / "stat").read_text().split(") ")[-1][0] != "Z":
                found.append(f"{d.name}: {(d / 'cmdline').read_bytes().replace(bytes(1), b' ')[:200].decode(errors='replace')}")
        except OSError:
            continue
    return found


@pytest.fixture(scope="session", autouse=True)
def leaves_nothing_behind():
    """After the run: no process it started still runs, and no bytepair
    temporary file or directory is left in its temporary directory."""
    yield
    import time

    local = sys.modules.get("bytepair.distributed.engines.local")
    if local is not None:  # the worker pools kept for reuse, closed as at exit
        local._close_local_engines()
    deadline = time.monotonic() + 10
    while (left := _processes_of_this_run()) and time.monotonic() < deadline:
        time.sleep(0.2)
    stray = sorted(p.name for p in SESSION_TMP.iterdir() if p.name.startswith(("bytepair-", ".bytepair-")))
    assert not left, f"processes left running: {left}"
    assert not stray, f"temporary files left in {SESSION_TMP}: {stray}"
