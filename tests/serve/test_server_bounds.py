"""``bytepair serve`` under hostile requests and every way of stopping it: a
real server process over real HTTP. A request's time and answer never hold
the event loop (``/api/info`` answers while large answers are made), a trace
is bounded by its total work, a deeply nested body is a 400, and SIGTERM,
SIGINT or the server dying stop its worker processes, mid-request too."""

from __future__ import annotations

import json
import os
import random
import signal
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


class Serve:
    """``bytepair serve`` in its own process (its own session, so a signal
    reaches only it)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        pkg = Path(bytepair.__file__).resolve().parent.parent
        env["PYTHONPATH"] = os.pathsep.join([str(pkg), env.get("PYTHONPATH", "")])
        exe = Path(sys.executable).with_name("bytepair")
        self.proc = subprocess.Popen([str(exe), "serve", "-e", "gpt2", "cl100k_base", "o200k_base", "--port", "0"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True)
        line = self.proc.stdout.readline()
        assert line.startswith("bytepair serve: http://127.0.0.1:"), line
        self.url = line.split()[2].rstrip("/")

    def descendants(self) -> list[int]:
        """Processes started by the server (its workers, the resource tracker)."""
        out, todo = [], [self.proc.pid]
        while todo:
            parent = todo.pop()
            for d in Path("/proc").glob("[0-9]*"):
                try:
                    if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                        out.append(int(d.name))
                        todo.append(int(d.name))
                except (OSError, ValueError, IndexError):
                    continue
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        self.proc.stdout.close()
        self.proc.stderr.close()


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture(scope="module")
def server():
    s = Serve()
    yield s
    s.stop()


def test_deeply_nested_json_is_a_400(server):
    status, payload, _ = call(server.url, "/api/encode", raw=b"[" * 200_000 + b"]" * 200_000)
    assert status == 400, payload[:300]
    assert "deeply" in json.loads(payload)["error"]


def test_trace_work_is_bounded_by_all_chunks_not_the_longest(server):
    # 32 different runs of 2,663 CJK characters: each chunk is small, all of them are not
    r = random.Random(5)
    runs = ["".join(chr(r.randint(0x4E00, 0x9FFF)) for _ in range(2663)) for _ in range(32)]
    status, payload, took = call(server.url, "/api/trace", {"text": " ".join(runs), "merges": 2000,
                                                             "pattern": "gpt2"})
    assert status == 413, (status, took)
    assert "bytes x merges" in json.loads(payload)["error"]
    assert took < 10


def test_compare_is_bounded_by_its_total_work(server):
    """/api/compare encodes every text with every tokenizer: 16 texts of 60 KB
    (each under the per-text limit) x 3 tokenizers is refused with 413 naming
    the total, before any encoding; the same texts with one tokenizer pass."""
    from bytepair.serve.app import LIMITS

    r = random.Random(7)
    texts = [{"label": f"t{k}", "text": "".join(r.choice("abcdefgh ") for _ in range(60_000))} for k in range(16)]
    names = ["gpt2", "cl100k_base", "o200k_base"]
    status, payload, took = call(server.url, "/api/compare", {"texts": texts, "tokenizers": names})
    assert status == 413, (status, payload[:300])
    msg = json.loads(payload)["error"]
    assert f"{16 * 60_000 * 3:,}" in msg and f"{LIMITS['compare_work']:,}" in msg, msg
    assert took < 5
    status, payload, _ = call(server.url, "/api/compare", {"texts": texts[:8], "tokenizers": names[:1]})
    assert status == 200, payload[:300]
    assert len(json.loads(payload)["rows"]) == 8


def test_large_answers_do_not_hold_the_event_loop(server):
    idle = min(call(server.url, "/api/info")[2] for _ in range(5))
    r = random.Random(2)
    text = "".join(chr(r.choice([r.randint(0x20, 0x7E), r.randint(0xAC00, 0xD7A3)])) for _ in range(100_000))
    text = text.encode("utf-8")[:256 * 1024].decode("utf-8", "ignore")
    results = []

    def big():
        results.append(call(server.url, "/api/encode", {"text": text}))

    threads = [threading.Thread(target=big) for _ in range(4)]
    for t in threads:
        t.start()
    busy = []
    while any(t.is_alive() for t in threads):
        status, _, took = call(server.url, "/api/info", timeout=60)
        assert status == 200
        busy.append(took)
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert [r[0] for r in results] == [200] * 4
    assert len(busy) >= 3
    # the answers are tens of MB; serialised on the event loop they stalled /api/info for seconds
    assert max(busy) < max(1.0, 50 * idle), (idle, sorted(busy)[-5:])
    n_tokens = sum(res["count"] for res in json.loads(results[0][1])["results"])
    assert len(results[0][1]) < 64 * n_tokens  # compact: no indentation, no spaces


def _heavy_trace(url: str) -> threading.Thread:
    r = random.Random(1)
    words = " ".join("".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(5, 30)))
                     for _ in range(800))[:14_000]

    def go() -> None:
        try:
            call(url, "/api/trace", {"text": " ".join([words] * 10), "merges": 2000, "pattern": "gpt2"}, timeout=120)
        except OSError:
            pass  # the server went away: expected

    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "SIGKILL"])
def test_stopping_the_server_stops_its_workers_mid_request(how):
    s = Serve()
    try:
        t = _heavy_trace(s.url)
        deadline = time.monotonic() + 60
        while len(kids := s.descendants()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(kids) >= 2, kids  # the workers (and the resource tracker)
        time.sleep(1.0)  # the trace is running in a worker
        s.proc.send_signal(getattr(signal, how))
        s.proc.wait(30)
        deadline = time.monotonic() + 15
        while any(alive(p) for p in kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in kids if alive(p)], how
        t.join(30)
    finally:
        s.stop()
