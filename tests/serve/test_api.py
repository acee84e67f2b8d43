"""The JSON endpoints of ``bytepair serve`` against a live server on a free port:
results equal the library's, bad requests get a 4xx JSON message, and nothing
but the page's own assets is ever served."""

from __future__ import annotations

import itertools
import json
import socket
import sys
import urllib.error
import urllib.request

import pytest

from bytepair import get_encoding, load
from bytepair.cli import main
from bytepair.inspect import compare, pieces, trace
from bytepair.serve import LIMITS, PortInUseError, Server, bind
from conftest import corpus, optional

optional("starlette")
optional("uvicorn")

NAMES = ["gpt2", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module")
def server():
    with Server({n: get_encoding(n) for n in NAMES}) as s:
        yield s


def request(server, path, body=None, *, raw=None, method=None, headers=None):
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(server.url.rstrip("/") + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def api(server, path, body=None, **kw):
    status, headers, payload = request(server, path, body, **kw)
    assert "json" in headers.get("content-type", ""), (status, payload[:200])
    return status, json.loads(payload)


def test_info(server):
    status, info = api(server, "/api/info")
    assert status == 200
    assert [t["name"] for t in info["tokenizers"]] == NAMES
    assert info["patterns"] == ["none", "gpt2", "cl100k", "o200k"]
    assert info["limits"] == LIMITS


def test_encode_equals_the_library():
    text = corpus("ko_prose.txt")[:1500] + "\n" + corpus("en_austen.txt")[:1500]
    with Server({n: get_encoding(n) for n in NAMES}) as s:
        status, data = api(s, "/api/encode", {"text": text, "tokenizers": NAMES})
    assert status == 200 and data["bytes"] == len(text.encode()) and data["chars"] == len(text)
    for r, name in zip(data["results"], NAMES):
        tok = get_encoding(name)
        assert r["tokenizer"] == name and r["count"] == len(tok.encode(text))
        assert [t["id"] for t in r["tokens"]] == tok.encode(text)
        p = pieces(tok, text)
        assert [t["complete"] for t in r["tokens"]] == [x.complete for x in p.pieces]
        assert r["partial"] == sum(not x.complete for x in p.pieces)
        assert b"".join(bytes.fromhex(t["hex"]) for t in r["tokens"]) == text.encode()


def test_special_token_text_is_plain_text(server):
    status, data = api(server, "/api/encode", {"text": "<|endoftext|>", "tokenizers": ["gpt2"]})
    assert status == 200 and data["results"][0]["count"] == len(get_encoding("gpt2").encode_ordinary("<|endoftext|>"))


def test_trace_cuts_rebuild_every_step(server):
    text = "low lower lowest 낮은 더 낮은 가장 낮은"
    status, data = api(server, "/api/trace", {"text": text, "merges": 15, "pattern": "gpt2"})
    assert status == 200
    want = trace(text, 15, pattern="gpt2")
    assert len(data["steps"]) == len(want.steps)
    raw = text.encode()
    for s, w in zip(data["steps"], want.steps):
        assert (s["merge"], s["id"], s["count"], s["num_tokens"]) == (w.merge, w.id, w.count, w.num_tokens)
        assert bytes.fromhex(s["token"]["hex"]) == w.token
        # the page rebuilds the text after merge k from the cuts still alive at k
        cuts = [c for c in range(1, len(raw)) if data["removed"][c - 1] is None or data["removed"][c - 1] > w.merge]
        edges = [0, *cuts, len(raw)]
        assert [raw[a:b] for a, b in itertools.pairwise(edges)] == w.tokens


def test_trace_of_a_long_corpus_has_no_view(server):
    text = corpus("en_austen.txt")[:20000]
    status, data = api(server, "/api/trace", {"text": text, "merges": 5, "pattern": "o200k"})
    assert status == 200 and data["removed"] is None and len(data["steps"]) == 5


def test_train_download_matches_the_trace(server, tmp_path):
    text = "banana bandana " * 3
    status, headers, payload = request(server, "/api/train", {"text": text, "merges": 4, "pattern": "none"})
    assert status == 200 and "attachment" in headers["content-disposition"]
    path = tmp_path / "t.bytepair.json"
    path.write_bytes(payload)
    tok = load(path)
    steps = trace(text, 4).steps
    assert [tok.decode_single_token_bytes(256 + k) for k in range(4)] == [s.token for s in steps]


def test_compare_equals_the_library(server):
    texts = [{"label": "en", "text": "Hello world, how are you?"}, {"label": "ko", "text": "안녕하세요, 잘 지내세요?"}]
    status, data = api(server, "/api/compare", {"texts": texts, "tokenizers": NAMES})
    assert status == 200
    want = compare({t["label"]: t["text"] for t in texts}, {n: get_encoding(n) for n in NAMES}).to_dict()
    assert data == json.loads(json.dumps(want))


@pytest.mark.parametrize("path,body,status,message", [
    ("/api/encode", {"tokenizers": ["gpt2"]}, 422, "'text' must be a string (it is missing)"),
    ("/api/encode", {"text": 5}, 422, "'text' must be a string"),
    ("/api/encode", {"text": "x", "tokenizers": ["nope"]}, 404, "unknown tokenizer 'nope'"),
    ("/api/encode", {"text": "x", "tokenizers": "gpt2"}, 422, "'tokenizers' must be a list"),
    ("/api/encode", {"text": "x", "tokenizers": ["gpt2"] * 9}, 413, "at most 8 tokenizers"),
    ("/api/encode", {"text": "x" * (LIMITS["encode_text"] + 1)}, 413, "'text' is 262,145 bytes; the limit is"),
    ("/api/encode", [1, 2], 400, "must be a JSON object, not list"),
    ("/api/trace", {"text": "abc", "merges": 0}, 422, "'merges' must be between 1 and"),
    ("/api/trace", {"text": "abc", "merges": LIMITS["merges"] + 1}, 422, "'merges' must be between"),
    ("/api/trace", {"text": "abc", "merges": "3"}, 422, "'merges' must be a whole number"),
    ("/api/trace", {"text": "abc", "merges": True}, 422, "'merges' must be a whole number"),
    ("/api/trace", {"text": "", "merges": 3}, 422, "'text' is empty"),
    ("/api/trace", {"text": "abc", "merges": 3, "pattern": "(a+)+$"}, 422, "'pattern' must be one of"),
    ("/api/train", {"text": "abc", "merges": 3, "pattern": "x"}, 422, "'pattern' must be one of"),
    ("/api/trace", {"text": "ab" * 10_000, "merges": 2000}, 413, "bytes x merges is 40,000,000, over the limit"),
    ("/api/compare", {"texts": []}, 422, "'texts' must be a non-empty list"),
    ("/api/compare", {"texts": ["abc"]}, 422, "texts[0] must be an object"),
    ("/api/compare", {"texts": [{"label": "a", "text": "x"}] * 17}, 413, "at most 16 texts"),
])
def test_bad_requests_get_a_4xx_json_message(server, path, body, status, message):
    got, data = api(server, path, body)
    assert got == status and message in data["error"], data


def test_malformed_and_oversized_bodies(server):
    got, data = api(server, "/api/encode", raw=b'{"text": ')
    assert got == 400 and "not valid JSON" in data["error"]
    got, data = api(server, "/api/encode", raw=b"\xff\xfe")
    assert got == 400 and "not UTF-8" in data["error"]


def _raw_reply(server, head: bytes, body_chunks) -> str:
    host, port = server.url.split("//")[1].rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=20) as c:
        c.sendall(head)
        try:
            for chunk in body_chunks:
                c.sendall(chunk)
        except OSError:  # the server answered and closed while we were still sending
            pass
        reply = b""
        try:
            while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < _length(reply):
                data = c.recv(65536)
                if not data:
                    break
                reply += data
        except OSError:
            pass
        return reply.decode("latin-1")


def _length(reply: bytes) -> int:
    for line in reply.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":")[1])
    return 0


def test_streamed_oversized_body_is_cut_off(server):
    piece = b" " * 65536
    n = LIMITS["body"] // len(piece) + 2
    chunks = (f"{len(piece):x}\r\n".encode() + piece + b"\r\n" for _ in range(n))
    reply = _raw_reply(server, b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n", chunks)
    assert reply.startswith("HTTP/1.1 413") and "over the limit" in reply


def test_oversized_body_is_refused_before_it_is_read(server):
    reply = _raw_reply(server, b"POST /api/encode HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                               b"Content-Length: 999999999\r\n\r\n{", [])
    assert reply.startswith("HTTP/1.1 413") and "999,999,999 bytes; the limit is" in reply


def test_routes_methods_and_files(server):
    got, data = api(server, "/api/nope")
    assert got == 404 and data["error"] == "not found: /api/nope"
    got, data = api(server, "/api/encode")  # GET on a POST endpoint
    assert got == 405 and "method GET not allowed" in data["error"]
    for path in ["/assets/../pyproject.toml", "/assets/%2e%2e%2fapp.py", "/assets/app.py", "/assets/index.html",
                 "/assets/..%2F..%2F__init__.py", "/static/app.js", "/assets/%2Fetc%2Fpasswd", "/etc/passwd"]:
        status, _, payload = request(server, path)
        assert status == 404, path
        assert b"import" not in payload and b"root:" not in payload
    status, headers, page = request(server, "/")
    assert status == 200 and b'<script src="/assets/app.js"' in page
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    for name, kind in [("app.js", "javascript"), ("app.css", "css")]:
        status, headers, _ = request(server, "/assets/" + name)
        assert status == 200 and kind in headers["content-type"]


def test_page_and_assets_load_nothing_from_elsewhere(server):
    import re

    for path in ["/", "/assets/app.js", "/assets/app.css"]:
        _, _, payload = request(server, path)
        text = payload.decode()
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text), path  # no CDN, no remote URL


def test_foreign_host_header_is_refused(server):
    status, _, payload = request(server, "/api/info", headers={"Host": "evil.example"})
    assert status == 400 and b"Traceback" not in payload


def test_port_in_use_is_one_line_naming_it(capsys):
    taken = bind("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(PortInUseError, match=f"port {port} on 127.0.0.1 is in use"):
            bind("127.0.0.1", port)
        assert main(["serve", "--port", str(port)]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is in use" in err and "Traceback" not in err


def test_cli_tokenizers_loaded_at_start(monkeypatch, tmp_path, capsys):
    from bytepair import train

    path = tmp_path / "mine.json"
    train("low lower lowest " * 5, 260, pattern="gpt2").save(path)
    seen = {}

    def fake_serve(toks, host, port, open_browser=False):
        seen.update(toks=dict(toks), host=host, port=port, open=open_browser)

    monkeypatch.setattr("bytepair.serve.serve", fake_serve)  # the command looks it up when it runs
    assert main(["serve", "--port", "0", "-t", str(path)]) == 0
    assert list(seen["toks"]) == [*NAMES, "mine.json"] and seen["host"] == "127.0.0.1"
    assert main(["serve", "--port", "0", "-e", "gpt2", "-t", str(path), "--open"]) == 0
    assert list(seen["toks"]) == ["gpt2", "mine.json"] and seen["open"] is True
    assert main(["serve", "--port", "0", "-t", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_missing_extra_is_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'bytepair[serve]'" in err and err.count("\n") == 1


def test_a_character_level_tokenizer_file_is_served(tmp_path):
    from bytepair import CharTokenizer

    char = CharTokenizer.train("hello world, 안녕 세상", 6)
    char.save(tmp_path / "char.json")
    with Server({"char.json": load(tmp_path / "char.json"), "gpt2": get_encoding("gpt2")}) as s:
        status, info = api(s, "/api/info")
        assert status == 200 and info["tokenizers"][0] == {"name": "char.json", "n_vocab": len(char.vocab),
                                                           "pattern": "character-level"}
        status, data = api(s, "/api/encode", {"text": "hello 안녕", "tokenizers": ["char.json"]})
        assert status == 200 and [t["id"] for t in data["results"][0]["tokens"]] == char.encode("hello 안녕")
        status, data = api(s, "/api/compare", {"texts": [{"label": "a", "text": "hello"}]})
        assert status == 200 and {r["tokenizer"] for r in data["rows"]} == {"char.json", "gpt2"}


def test_requests_from_other_sites_are_refused(server):
    got, data = api(server, "/api/encode", {"text": "x"}, headers={"Content-Type": "text/plain"})
    assert got == 415 and "application/json" in data["error"]
    got, data = api(server, "/api/encode", {"text": "x"}, headers={"Origin": "https://evil.example"})
    assert got == 403 and "https://evil.example" in data["error"]
    host = server.url.split("//")[1].rstrip("/")
    got, data = api(server, "/api/encode", {"text": "x"}, headers={"Origin": f"http://{host}"})
    assert got == 200
