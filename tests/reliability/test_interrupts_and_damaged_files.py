"""Faults: interrupted training, failing writes and damaged files.

* training interrupted by an exception from the data iterator or by
  KeyboardInterrupt (raised by the iterator, or delivered as a signal while the
  merge loop runs) propagates, writes nothing, and the next training in the same
  process gives the same result as an uninterrupted one;
* an interrupt pending when a process makes its first numpy array (numpy's C
  API not loaded yet) is a KeyboardInterrupt, not a Rust panic;
* a save that fails (disk full, failing rename, missing folder) raises OSError
  and leaves the previous file byte for byte and no temporary file behind;
* truncated, bit-flipped or structurally wrong tokenizer files raise a clear
  ``bytepair`` error (a ``ValueError``), never another exception type and never
  a Rust panic (``pyo3_runtime.PanicException``).
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import pkgutil
import random
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import CharTokenizer, formats
from bytepair.errors import BytepairError
from conftest import CORPORA, corpus, no_panic, optional
from conftest import HYPOTHESIS_SCALE as SCALE

SETTINGS = {
    "derandomize": True,
    "database": None,
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow],
}


DOCS = [corpus("en_austen.txt")[:6000], corpus("ko_prose.txt")[:2000], "<|endoftext|> tail"]


def _clean_train():
    return bytepair.train(DOCS, 320, pattern="o200k", special_tokens=["<|endoftext|>"])


@pytest.fixture(scope="module")
def clean():
    return _clean_train()


@pytest.fixture(scope="module")
def clean_char():
    return CharTokenizer.train(DOCS[0] + DOCS[1], 60)


def _pair(kind, clean, clean_char):
    """A tokenizer of ``kind`` and a smaller one of the same kind (different
    file contents)."""
    if kind == "char":
        return clean_char, CharTokenizer.train(DOCS[0] + DOCS[1], 50)
    return clean, clean.truncate(clean.n_vocab - 10)[0]


def _failing_docs(exc: BaseException, after: int):
    def gen():
        for i, d in enumerate(DOCS * 3):
            if i == after:
                raise exc
            yield d

    return gen()


@pytest.mark.parametrize("after", [0, 1, 4])
@pytest.mark.parametrize("exc", [RuntimeError("disk read failed"), KeyboardInterrupt(), OSError(errno.EIO, "EIO")])
def test_training_interrupted_by_iterator(tmp_path, monkeypatch, clean, exc, after):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(type(exc)):
        no_panic(bytepair.train, _failing_docs(exc, after), 320, pattern="o200k", special_tokens=["<|endoftext|>"])
    assert os.listdir(tmp_path) == []  # no partial output anywhere
    again = _clean_train()  # the process is still usable and unaffected
    assert again.merges == clean.merges and again == clean


def _train_under_sigint(docs):
    """Trains on ``docs`` while another thread raises SIGINT every 10 ms;
    True when KeyboardInterrupt came out of training."""
    stop = threading.Event()

    def pester():
        while not stop.wait(0.01):
            signal.raise_signal(signal.SIGINT)

    interrupted = False
    # A signal that lands in a finalizer becomes an "unraisable" exception, and
    # one that lands inside pytest's own unraisable hook makes pytest fail the
    # test ("Failed to process unraisable exception"). Both
    # are expected under this barrage: a trivial hook takes them until the
    # last signal has arrived.
    hook = sys.unraisablehook
    sys.unraisablehook = _ignore_unraisable
    thread = threading.Thread(target=pester)
    thread.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            no_panic(bytepair.train, docs, 12000, pattern="gpt2")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stop.set()
        while thread.is_alive():  # a last signal may still be on its way
            try:
                thread.join(0.01)
            except KeyboardInterrupt:
                pass
        try:
            time.sleep(0.01)
        except KeyboardInterrupt:
            pass
        sys.unraisablehook = hook
    return interrupted


def _ignore_unraisable(_unraisable) -> None:
    """An unraisable-exception hook that drops the report (see _train_under_sigint)."""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_training_interrupted_by_signal(clean):
    """SIGINT every 10 ms from 10 ms into training (1.4 MB, vocab 12,000):
    KeyboardInterrupt comes out, and the next run is unaffected. Up to five
    attempts, because a signal landing in a finalizer is swallowed by Python."""
    docs = [corpus(n) for n in CORPORA] * 4
    interrupted = False
    for _ in range(5):  # until one signal is delivered as KeyboardInterrupt
        interrupted = _train_under_sigint(docs)
        if interrupted:
            break
    assert interrupted, "five trainings of 1.4 MB under SIGINT every 10 ms all ended without KeyboardInterrupt"
    again = _clean_train()
    assert again == clean


FIRST_ARRAY = """
import _thread, threading, bytepair
core = bytepair.get_encoding("gpt2")._core
text = "hello world, " * 3_000_000  # 39 MB: the core encodes for longer than the timer below
threading.Timer(0.1, _thread.interrupt_main).start()  # Ctrl-C while the core runs without checking signals
try:
    core.encode_to_array(text, None, None, 1)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
except BaseException as e:
    print(type(e).__name__)
"""


def test_interrupt_while_the_first_numpy_array_is_made():
    """The interrupt is raised when the core hands its ids to numpy, the first
    numpy array of the process: numpy's Python code for loading its C API runs
    then, and the interrupt comes out as KeyboardInterrupt, not a panic."""
    optional("numpy")
    got = subprocess.run([sys.executable, "-c", FIRST_ARRAY], capture_output=True, text=True, timeout=120)
    assert got.stdout.strip() == "KeyboardInterrupt", got.stdout + got.stderr
    assert "panicked" not in got.stderr, got.stderr


# ---------------------------------------------------------------- writes


def _savers():
    """(label, function(tokenizer, path), kind) for every writer the package
    has; ``kind`` says which tokenizer it writes: ``"char"`` for the
    character-level format, ``"bytes"`` for the others."""
    out = [("Tokenizer.save", lambda tok, path: tok.save(path), "bytes")]
    for info in pkgutil.iter_modules(formats.__path__):
        mod = importlib.import_module(f"bytepair.formats.{info.name}")
        if callable(getattr(mod, "save", None)) and info.name != "native":
            out.append((f"formats.{info.name}.save", mod.save, "char" if info.name == "char" else "bytes"))
    return out


SAVERS = _savers()


def _snapshot(folder):
    """Every file under ``folder`` (relative path -> bytes)."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            full = os.path.join(dirpath, f)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, folder)] = fh.read()
    return out


@pytest.mark.parametrize("label,save,kind", SAVERS, ids=[s[0] for s in SAVERS])
@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_failed_save_keeps_previous_file(tmp_path, monkeypatch, clean, clean_char, label, save, kind, where):
    path = tmp_path / "tok.out"
    tok, small = _pair(kind, clean, clean_char)
    save(tok, path)
    before = _snapshot(tmp_path)
    assert before

    def enospc(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "write":
        real_fdopen = os.fdopen

        class Full:
            def __init__(self, f):
                self.f = f

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.f.close()
                return False

            def write(self, data):
                self.f.write(data[: len(data) // 2])
                enospc()

            def __getattr__(self, name):
                return getattr(self.f, name)

        monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
        # writers that open the file themselves
        import builtins

        real_open = builtins.open

        def full_open(file, mode="r", *a, **k):
            f = real_open(file, mode, *a, **k)
            return Full(f) if any(c in mode for c in "wax") else f

        monkeypatch.setattr(builtins, "open", full_open)
    elif where == "fsync":
        monkeypatch.setattr(os, "fsync", enospc)
    else:
        monkeypatch.setattr(os, "replace", lambda *a, **k: enospc())
        monkeypatch.setattr(os, "rename", lambda *a, **k: enospc())
    with pytest.raises(OSError) as e:
        save(small, path)
    monkeypatch.undo()
    assert e.value.errno == errno.ENOSPC
    after = _snapshot(tmp_path)
    assert sorted(after) == sorted(before), f"{label}: files added or removed: {sorted(set(after) ^ set(before))}"
    assert after == before, f"{label}: previous file changed"


def test_save_to_missing_folder_raises(tmp_path, clean):
    target = tmp_path / "no" / "such" / "dir" / "tok.json"
    with pytest.raises(OSError):
        clean.save(target)
    assert not (tmp_path / "no").exists()


def test_save_over_a_directory_raises_and_keeps_it(tmp_path, clean):
    d = tmp_path / "adir"
    d.mkdir()
    (d / "keep").write_text("x")
    with pytest.raises(OSError):
        clean.save(d)
    assert (d / "keep").read_text() == "x"
    assert sorted(os.listdir(tmp_path)) == ["adir"]


# ---------------------------------------------------------------- damaged files


def _load_expect_clear_error(path):
    """Loads ``path``: either a working tokenizer or a bytepair error that is a
    ValueError with a message; anything else fails."""
    try:
        tok = no_panic(bytepair.load, path)
    except BytepairError as e:
        assert isinstance(e, ValueError), type(e)
        assert str(e)
        return None
    except (KeyError, TypeError, IndexError, AttributeError, UnicodeError, RecursionError) as e:
        pytest.fail(f"unclear error {type(e).__name__}: {e}")
    # a damaged file that still parses must give a consistent tokenizer
    text = "hello world 토큰 <|endoftext|>"
    if isinstance(tok, CharTokenizer):  # characters outside its vocabulary come back as U+FFFD
        known = set(tok.vocab[1:])
        want = "".join(c if c in known else "\ufffd" for c in text)
        assert no_panic(tok.decode, no_panic(tok.encode, text)) == want
        return tok
    assert no_panic(tok.decode, no_panic(tok.encode_ordinary, text)) == text
    return tok


@pytest.fixture(scope="module")
def saved_bytes(tmp_path_factory, clean):
    p = tmp_path_factory.mktemp("saved") / "tok.json"
    clean.save(p)
    return p.read_bytes()


def test_truncated_files_raise(tmp_path, saved_bytes):
    path = tmp_path / "t.json"
    cuts = sorted({0, 1, 2, len(saved_bytes) - 1, len(saved_bytes) - 2} | set(range(0, len(saved_bytes), 997)))
    for cut in cuts:
        path.write_bytes(saved_bytes[:cut])
        if cut < len(saved_bytes) - 1:  # only the final newline may go
            with pytest.raises(BytepairError) as e:
                no_panic(bytepair.load, path)
            assert isinstance(e.value, ValueError) and str(e.value)
        else:
            _load_expect_clear_error(path)


@settings(max_examples=150 * SCALE, **SETTINGS)
@given(st.data())
def test_bitflipped_files(tmp_path_factory, saved_bytes, data):
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    raw = bytearray(saved_bytes)
    for _ in range(data.draw(st.integers(1, 8), label="flips")):
        i = rng.randrange(len(raw))
        raw[i] = rng.choice([raw[i] ^ (1 << rng.randrange(8)), rng.randrange(256), ord('"'), ord("]")])
    path = tmp_path_factory.mktemp("flip") / "t.json"
    path.write_bytes(bytes(raw))
    _load_expect_clear_error(path)


def _mutations(d):
    """Structurally wrong but valid JSON variants of a saved tokenizer dict."""
    v = d["vocab"]
    s = d["special_tokens"]
    yield "wrong format", {**d, "format": "tiktoken"}
    yield "future version", {**d, "version": 99}
    yield "version as str", {**d, "version": "1"}
    yield "no vocab", {k: x for k, x in d.items() if k != "vocab"}
    yield "vocab not a list", {**d, "vocab": "abc"}
    yield "vocab of ints", {**d, "vocab": list(range(len(v)))}
    yield "vocab with null", {**d, "vocab": v[:-1] + [None]}
    yield "duplicate token", {**d, "vocab": v[:-1] + [v[-2]]}
    yield "empty token", {**d, "vocab": v[:-1] + [""]}
    yield "missing byte", {**d, "vocab": v[1:]}
    yield "token outside table", {**d, "vocab": v[:-1] + ["\u4e00"]}
    yield "merges not a list", {**d, "merges": {"a": 1}}
    yield "merge out of range", {**d, "merges": d["merges"][:-1] + [[0, 10**9]]}
    yield "negative merge", {**d, "merges": d["merges"][:-1] + [[-1, 5]]}
    yield "merge of floats", {**d, "merges": d["merges"][:-1] + [[1.5, 2.0]]}
    yield "merge triple", {**d, "merges": d["merges"][:-1] + [[1, 2, 3]]}
    yield "merges too short", {**d, "merges": d["merges"][:-1]}
    yield "special id collides", {**d, "special_tokens": {k: 5 for k in s}}
    yield "special id negative", {**d, "special_tokens": {k: -1 for k in s}}
    yield "special id huge", {**d, "special_tokens": {k: 2**40 for k in s}}
    yield "special id str", {**d, "special_tokens": {k: "x" for k in s}}
    yield "special empty", {**d, "special_tokens": {"": len(v)}}
    yield "specials a list", {**d, "special_tokens": list(s)}
    yield "bad pattern", {**d, "pattern": "(unclosed"}
    yield "pattern int", {**d, "pattern": 5}
    yield "bad special_text", {**d, "special_text": "maybe"}
    yield "name a list", {**d, "name": ["x"]}
    yield "top-level list", [d]
    yield "null", None


def test_structurally_wrong_files_raise(tmp_path, saved_bytes):
    d = json.loads(saved_bytes)
    failures = []
    for label, bad in _mutations(d):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        try:
            no_panic(bytepair.load, path)
            failures.append(f"{label}: loaded without error")
        except BytepairError as e:
            if not (isinstance(e, ValueError) and str(e)):
                failures.append(f"{label}: {type(e).__name__} without a message")
        except Exception as e:  # noqa: BLE001 - any other type is the failure we look for
            failures.append(f"{label}: {type(e).__name__}: {e}")
    assert not failures, "\n".join(failures)


def test_not_a_file_and_binary_garbage(tmp_path):
    with pytest.raises(OSError):
        bytepair.load(tmp_path / "missing.json")
    for junk in [b"", b"\x00" * 100, b"\xff\xfe\x00{", os.urandom(64), b"{" * 100_000]:
        p = tmp_path / "junk"
        p.write_bytes(junk)
        with pytest.raises(BytepairError):
            no_panic(bytepair.load, p)


@pytest.mark.parametrize("label,save,kind", SAVERS, ids=[s[0] for s in SAVERS])
def test_damaged_files_of_every_format(tmp_path, clean, clean_char, label, save, kind):
    """Each writer's output, truncated or bit-flipped, read back by
    ``bytepair.load`` (which detects the format): a clear bytepair error or a
    tokenizer that still round-trips, never another exception or a panic."""
    orig = tmp_path / "orig" / "tok.out"
    orig.parent.mkdir()
    save(_pair(kind, clean, clean_char)[0], orig)
    files = _snapshot(orig.parent)
    rng = random.Random(11)
    case = 0
    for rel, data in sorted(files.items()):
        damaged = [data[:cut] for cut in sorted({0, 1, len(data) // 3, len(data) // 2, len(data) - 2})]
        for _ in range(12):
            raw = bytearray(data)
            for _ in range(rng.randrange(1, 4)):
                i = rng.randrange(len(raw))
                raw[i] = rng.randrange(256)
            damaged.append(bytes(raw))
        for blob in damaged:
            case += 1
            root = tmp_path / f"case{case}"
            for r, d in files.items():
                (root / r).parent.mkdir(parents=True, exist_ok=True)
                (root / r).write_bytes(blob if r == rel else d)
            target = root / "tok.out"
            _load_expect_clear_error(target)
