"""``bytepair serve`` stays responsive under heavy requests: a real server
(the installed executable, uvicorn on 127.0.0.1) answers ``/api/info`` at once
while traces are in flight, and a request whose work would be over the limit
under any pattern (one long run of letters is one chunk under gpt2 too) gets a
413 saying why, before any work. The server is stopped with SIGTERM, and its
worker processes with it (the session checks that none is left)."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from serve_http import call

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import bytepair
from bytepair.serve import LIMITS


@pytest.fixture(scope="module")
def server():
    env = dict(os.environ)
    pkg = Path(bytepair.__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(pkg), env.get("PYTHONPATH", "")])
    exe = Path(sys.executable).with_name("bytepair")
    proc = subprocess.Popen([str(exe), "serve", "-e", "gpt2", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()  # "bytepair serve: http://127.0.0.1:PORT/  (...)"
        assert line.startswith("bytepair serve: http://127.0.0.1:"), (line, proc.stderr.read() if not line else "")
        yield line.split()[2].rstrip("/")
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def heavy_text():
    # ~250 KB of random words, 14 KB of them distinct: under the work limit,
    # but the trace replays 2000 merges over them (seconds of Python)
    r = random.Random(1)
    words = " ".join("".join(r.choice(string.ascii_lowercase) for _ in range(r.randint(5, 30))) for _ in range(800))
    return (" ".join([words[:14_000]] * 18))[:250_000]


def test_info_answers_while_heavy_work_is_in_flight(server):
    assert call(server, "/api/info")[0] == 200
    idle = min(call(server, "/api/info")[2] for _ in range(5))
    words = heavy_text()
    # one chunk of 262 KB, 20 merges: under the work limit; its tokens reach
    # the whole chunk (building that vocabulary held the GIL for 30 s)
    run = "一" * 87381
    jobs = [("/api/trace", words, 2000), ("/api/train", run, 20), ("/api/trace", run, 20)]
    results, busy = [], []

    def heavy(path, text, merges):
        results.append(call(server, path, {"text": text, "merges": merges, "pattern": "gpt2"}))

    # a fast machine ends one round of the work in well under a second: send
    # rounds until /api/info was timed enough times while work was in flight
    for _ in range(8):
        threads = [threading.Thread(target=heavy, args=job) for job in jobs]
        for t in threads:
            t.start()
        time.sleep(0.05)  # the requests are sent
        while any(t.is_alive() for t in threads) and len(busy) < 20:
            status, _, took = call(server, "/api/info", timeout=60)
            assert status == 200
            if any(t.is_alive() for t in threads):
                busy.append(took)
            time.sleep(0.02)
        for t in threads:
            t.join()
        if len(busy) >= 5:
            break
    assert len(busy) >= 3, "the heavy requests ended before /api/info could be timed"
    # idle is a few ms; the GIL held by the work gave 25-56 s
    assert max(busy) < max(2.0, 50 * idle), (idle, busy)
    print(f"/api/info idle {idle * 1e3:.1f} ms, with the work in flight at most {max(busy) * 1e3:.1f} ms")
    assert {r[0] for r in results} == {200}, [(r[0], r[1][:200]) for r in results if r[0] != 200]
    assert all(json.loads(r[1]) for r in results)


@pytest.mark.parametrize("path", ["/api/trace", "/api/train"])
def test_one_long_chunk_under_a_pattern_is_refused_with_the_reason(server, path):
    # 262 KB: under every size limit, but one chunk under gpt2 (a run of letters)
    status, payload, took = call(server, path, {"text": "一" * 87381, "merges": 2000, "pattern": "gpt2"})
    assert status == 413, payload[:300]
    msg = json.loads(payload)["error"]
    assert "distinct chunks under gpt2 hold 262,143 bytes" in msg and "bytes x merges" in msg, msg
    assert f"{LIMITS['trace_work']:,}" in msg
    assert took < 5, took
