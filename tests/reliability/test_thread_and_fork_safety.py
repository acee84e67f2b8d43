"""Concurrency: one ``Tokenizer`` shared by many Python threads, each mixing
``encode``/``encode_ordinary``/``encode_batch``/``decode``, gives exactly the
sequential results; a forked child process can encode (including
``encode_batch``, whose Rust thread pool does not survive ``fork``) without
deadlocking. Under free-threaded CPython the same test runs with real
parallelism in the Python threads.
"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
import threading
import time
import warnings

import pytest

import bytepair
from conftest import CORPORA, corpus

# BYTEPAIR_STRESS_ITERATIONS raises the count for a long run (docs/reliability.md)
THREADS = 8
ITERATIONS = int(os.environ.get("BYTEPAIR_STRESS_ITERATIONS", "40"))


def _texts(seed: int, n: int):
    rng = random.Random(seed)
    texts = []
    for name in CORPORA:
        body = corpus(name)
        for _ in range(n):
            start = rng.randrange(len(body))
            texts.append(body[start : start + rng.randrange(1, 400)])
    texts += ["", " " * 300, "<|endoftext|>", "x" * 500]
    rng.shuffle(texts)
    return texts


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_threads_and_batch_match_sequential(name):
    seed = 7
    enc = bytepair.get_encoding(name)
    texts = _texts(seed, 6)
    expected = [enc.encode(t, disallowed_special=()) for t in texts]
    expected_special = [enc.encode(t, allowed_special="all") for t in texts]
    mismatches = []
    errors = []
    start = threading.Barrier(THREADS)

    def worker(k: int):
        rng = random.Random(seed * 1000 + k)
        try:
            start.wait()
            for it in range(ITERATIONS):
                i = rng.randrange(len(texts))
                mode = it % 4
                if mode == 0:
                    got, want = enc.encode(texts[i], disallowed_special=()), expected[i]
                elif mode == 1:
                    got, want = enc.encode(texts[i], allowed_special="all"), expected_special[i]
                elif mode == 2:
                    idx = rng.sample(range(len(texts)), 8)
                    got = enc.encode_batch([texts[j] for j in idx], disallowed_special=())
                    want = [expected[j] for j in idx]
                else:
                    got, want = enc.decode(expected[i]), texts[i]
                if got != want:
                    mismatches.append((k, it, i))
        except BaseException as e:  # noqa: BLE001 - reported below, PanicException included
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, f"seed={seed}: {errors[:3]}"
    assert not mismatches, f"seed={seed}: (thread, iteration, text) {mismatches[:5]}"
    # a whole batch at once, too
    assert enc.encode_batch(texts, disallowed_special=()) == expected


def _run_in_fork(fn, timeout: float = 20.0):
    """Runs ``fn`` in a forked child; returns (exit code, output) or fails the
    test when the child does not finish within ``timeout`` (a deadlock)."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
        pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(r)
            out = fn()
            os.write(w, repr(out).encode())
            code = 0
        except BaseException as e:  # noqa: BLE001
            os.write(w, repr(e).encode())
        finally:
            os._exit(code)
    os.close(w)
    deadline = time.monotonic() + timeout
    chunks = []
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail(f"forked child did not finish within {timeout}s (deadlock)")
            if select.select([r], [], [], 0.05)[0]:
                chunks.append(os.read(r, 1 << 16))
        while True:
            c = os.read(r, 1 << 16)
            if not c:
                break
            chunks.append(c)
    finally:
        os.close(r)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_encode_after_fork_does_not_deadlock():
    enc = bytepair.get_encoding("gpt2")
    texts = ["hello world", "The quick brown fox jumps over the lazy dog."] * 50
    want = enc.encode_batch(texts)  # starts the Rust thread pool in the parent
    assert want[0] == [31373, 995]

    def child():
        got_one = enc.encode("hello world")
        got_batch = enc.encode_batch(texts)
        assert got_one == [31373, 995] and got_batch == want
        return "ok"

    code, out = _run_in_fork(child)
    assert (code, out) == (0, "'ok'")
    # the parent is still fine
    assert enc.encode_batch(texts) == want


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_train_after_fork_does_not_deadlock():
    docs = [corpus("en_kjv.txt")[:3000]]
    parent = bytepair.train(docs, 280, pattern="gpt2")

    def child():
        tok = bytepair.train(docs, 280, pattern="gpt2")
        assert tok.merges == parent.merges
        return "ok"

    code, out = _run_in_fork(child)
    assert (code, out) == (0, "'ok'")


# A superword tokenizer whose first stage (the ranks below its first token
# bridging words) holds over 20,000 tokens, so building that stage uses the
# thread pool, then a first encode long enough to run on two threads.
FIRST_STAGE_CHILD = """
import itertools, string, sys
import bytepair
from bytepair.patterns import SUPERWORD
letters = string.ascii_lowercase
words = [''.join(p).encode() for n in (2, 3) for p in itertools.product(letters, repeat=n)]
words += [''.join(p).encode() for p in itertools.product(letters[:8], repeat=4)]
tokens = [bytes([b]) for b in range(256)] + words + [b'ab cd', b'abc de', b'x y z']
enc = bytepair.Encoding('sw', pat_str=SUPERWORD, special_tokens={},
                        mergeable_ranks={t: i for i, t in enumerate(tokens)})
line = ' '.join(w.decode() for w in words[::37]) + '\\n'
text = line * (600_000 // len(line))
two = enc.encode_ordinary(text)  # the default: both cores
assert two == enc.encode_ordinary(text, num_threads=1), 'ids differ'
print(len(text), len(two))
"""


def test_first_encode_of_a_superword_tokenizer_on_two_threads_finishes():
    # the first stage was built on first use: inside a parallel encode, the
    # thread building it waited on the pool while the pool's thread waited on
    # the build (a deadlock, whatever the text); it is now built on load
    try:
        proc = subprocess.run([sys.executable, "-c", FIRST_STAGE_CHILD], capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("a superword tokenizer's first long encode on two threads did not finish in 60 s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.split()[0]) > 500_000
