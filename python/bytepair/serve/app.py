"""The web app of ``bytepair serve``: the page's assets and its JSON endpoints.

Endpoints (all answer JSON; errors are ``{"error": message}`` with a 4xx status,
never a traceback):

* ``GET /api/info``: the loaded tokenizers, training patterns and request limits;
* ``POST /api/encode`` ``{"text", "tokenizers": [names]}``: every token of the
  text per tokenizer (id, bytes, whether it is a whole UTF-8 sequence);
* ``POST /api/trace`` ``{"text", "merges", "pattern"}``: :func:`bytepair.inspect.trace`
  with, for short texts, the step at which each cut between two bytes disappears;
* ``POST /api/train`` (same body): the trained tokenizer as a bytepair file;
* ``POST /api/compare`` ``{"texts": [{"label", "text"}], "tokenizers": [names]}``:
  :func:`bytepair.inspect.compare`.

The page is three files shipped in ``bytepair/serve/static`` and read once at
start; no other file is ever served, and tokenizers are the ones given at start.

The work of every API request (encoding, traces, training, comparisons) runs in
a pool of :data:`WORKERS` worker processes, at most one request per worker at a
time, so it never holds the server's GIL: the event loop only reads requests and
writes answers, and ``/api/info`` or the page answer at once while a training
run is in flight. At most ``LIMITS["queued"]`` requests wait for a worker; more
get a 503. The cost of a trace or a training run is bounded by the bytes of
the text's distinct pre-token chunks times the merges (``LIMITS["trace_work"]``),
and answers are serialised to JSON in the worker, so neither a long request
nor a large answer holds the event loop. Stopping the server (Ctrl-C, SIGTERM,
or its process dying) stops the workers, mid-request too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import json
import multiprocessing
import os
import signal
import sys
import warnings
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__, patterns
from ..errors import ArgumentError
from ..formats.native import to_dict
from ..inspect import compare, pieces, trace
from ..inspect.common import TokenizerLike
from ..inspect.trace import TRACE_TOKENS_LIMIT
from ..processes import stop_with_parent
from ..tokenizer import Tokenizer
from ..training import train

#: Request limits (bytes of UTF-8 text unless said otherwise).
LIMITS: dict[str, int] = {
    "body": 4 * 1024 * 1024,  # any request body
    "encode_text": 256 * 1024,
    "tokenizers": 8,  # per request
    "trace_text": 256 * 1024,
    "trace_view": TRACE_TOKENS_LIMIT,  # texts up to this size show the text after every merge
    "merges": 2000,
    # each merge revisits the distinct chunks that hold its pair: their bytes x merges bounds a trace or
    # training run (with pattern "none" the whole text is one chunk)
    "trace_work": 32_000_000,
    "compare_texts": 16,
    "compare_text": 64 * 1024,
    # every text is encoded by every tokenizer: their bytes x tokenizers bounds a comparison, as large as
    # the largest /api/encode request (its text once per tokenizer)
    "compare_work": 256 * 1024 * 8,
    "queued": 8,  # requests waiting for a worker process; more get a 503
}

#: Worker processes that run the API's work (see the module notes).
WORKERS = max(1, min(2, os.cpu_count() or 1))

#: Pre-tokenization patterns the Train tab offers (named ones only: no user regex).
PATTERNS = ("none", "gpt2", "cl100k", "o200k")

ASSETS = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8",
          "index.html": "text/html; charset=utf-8"}

_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ApiError(Exception):
    """A request the API refuses: answered with ``status`` and ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _load_assets() -> dict[str, bytes]:
    folder = resources.files("bytepair.serve").joinpath("static")
    return {name: folder.joinpath(name).read_bytes() for name in ASSETS}


class _Headers:
    """Adds the security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                for k, v in _HEADERS.items():
                    if k.lower().encode() not in have:
                        headers.append((k.lower().encode(), v.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


# ---------------------------------------------------------------- request helpers


async def _json_body(request: Request) -> dict[str, Any]:
    # another site's page in the same browser may send requests here: a JSON content type makes the browser
    # ask first (CORS), which this server never allows, and an Origin naming another site is refused outright
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host", ""):
        raise ApiError(403, f"requests from {origin} are not accepted; open the page from this server")
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, f"the body must be sent as application/json, not {ctype or 'no content type'}")
    limit = LIMITS["body"]
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"request body is {int(declared):,} bytes; the limit is {limit:,}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body is over the limit of {limit:,} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ApiError(400, f"request body is not UTF-8 (invalid byte at offset {e.start})") from None
    except ValueError as e:
        raise ApiError(400, f"request body is not valid JSON: {e}") from None
    except RecursionError:
        raise ApiError(400, "request body nests arrays or objects too deeply") from None
    if not isinstance(data, dict):
        raise ApiError(400, f"request body must be a JSON object, not {type(data).__name__}")
    return data


def _text(data: Mapping[str, Any], key: str, limit: int, *, allow_empty: bool = True) -> str:
    v = data.get(key)
    if not isinstance(v, str):
        raise ApiError(422, f"'{key}' must be a string" + ("" if key in data else " (it is missing)"))
    # lone surrogates (JSON allows "\ud800") become U+FFFD, as the tokenizers treat them
    v = v.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    n = len(v.encode("utf-8"))
    if n > limit:
        raise ApiError(413, f"'{key}' is {n:,} bytes; the limit is {limit:,}")
    if not allow_empty and not v:
        raise ApiError(422, f"'{key}' is empty")
    return v


def _int(data: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
    v = data.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise ApiError(422, f"'{key}' must be a whole number")
    if not lo <= v <= hi:
        raise ApiError(422, f"'{key}' must be between {lo} and {hi}, got {v}")
    return v


# ---------------------------------------------------------------- the work, in worker processes

#: The tokenizers of this worker process (set once as it starts).
_TOKENIZERS: dict[str, Any] = {}


def _start_worker(tokenizers: dict[str, Any], parent: int) -> None:
    stop_with_parent(parent, signal.SIGKILL)  # the worker ends with the server
    _TOKENIZERS.update(tokenizers)


def _json_bytes(obj: Any) -> bytes:
    """Compact JSON, made in the worker process: a large answer never holds the event loop."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _in_json(job: Any, *args: Any) -> bytes:
    return _json_bytes(job(*args))


def _encode_job(text: str, names: list[str]) -> dict[str, Any]:
    n_bytes, n_chars = len(text.encode("utf-8")), len(text)
    results = []
    for name in names:
        p = pieces(_TOKENIZERS[name], text)
        toks = [{"id": x.id, "hex": x.bytes.hex(), "complete": x.complete} for x in p.pieces]
        count = len(toks)
        results.append({"tokenizer": name, "count": count, "partial": sum(not t["complete"] for t in toks),
                        "bytes_per_token": n_bytes / count if count else 0.0,
                        "chars_per_token": n_chars / count if count else 0.0, "tokens": toks})
    return {"bytes": n_bytes, "chars": n_chars, "results": results}


def _trace_job(text: str, merges: int, pattern: str | None) -> dict[str, Any]:
    t = trace(text, merges, pattern=pattern)
    out = t.to_dict()
    out["pattern"] = pattern or "none"
    for s in out["steps"]:
        s.pop("tokens", None)  # the cuts below say the same in a few bytes per merge
    out.pop("start_tokens", None)
    removed: list[int | None] | None = None
    if t.start_tokens is not None:
        n = t.num_bytes
        alive = _cuts(t.start_tokens)
        removed = [None] * max(0, n - 1)
        for s in t.steps:
            now = _cuts(s.tokens or [])
            for c in alive - now:
                removed[c - 1] = s.merge
            alive = now
    out["removed"] = removed
    out["view_limit"] = LIMITS["trace_view"]
    return out


def _train_job(text: str, merges: int, pattern: str | None) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer merges than asked: the trace shows it
        tok = train(text, 256 + merges, pattern=pattern, name="trained in bytepair serve", progress=False)
    return (json.dumps(to_dict(tok), ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _compare_job(texts: dict[str, str], names: list[str]) -> dict[str, Any]:
    return compare(texts, {n: _TOKENIZERS[n] for n in names}).to_dict()  # type: ignore[no-any-return]


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """While workers start: a spawned worker runs the parent's main script
    again unless the parent was started as a module (``python -m``); the
    ``bytepair`` script (written by the installer, not always with a
    ``__name__`` guard) would start another server in every worker. Naming
    this module as the main module's spec makes the workers import it instead."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None or not getattr(main, "__file__", None):
        yield
        return
    main.__spec__ = importlib.util.find_spec(__name__)
    try:
        yield
    finally:
        main.__spec__ = None


class _Workers:
    """The worker processes (started on first use, fresh interpreters: the
    server runs threads, which a fork would copy half-way) and the queue in
    front of them: at most :data:`WORKERS` requests run at once."""

    def __init__(self, tokenizers: Mapping[str, Any]) -> None:
        self._tokenizers = dict(tokenizers)
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._slots: asyncio.Semaphore | None = None
        self.waiting = 0  # requests running or waiting for a worker

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                WORKERS, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                initargs=(self._tokenizers, os.getpid()))
        return self._pool

    async def run(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` in a worker process; a 503 when too many requests wait."""
        if self.waiting >= WORKERS + LIMITS["queued"]:
            raise ApiError(503, f"the server is busy ({self.waiting} requests running or waiting); try again shortly")
        if self._slots is None:
            self._slots = asyncio.Semaphore(WORKERS)
        self.waiting += 1
        try:
            async with self._slots:
                try:
                    with _main_not_rerun():  # the pool starts its workers in submit
                        job = asyncio.get_running_loop().run_in_executor(self._executor(), fn, *args)
                    return await job
                except concurrent.futures.process.BrokenProcessPool:
                    self.close()
                    raise ApiError(500, "a worker process stopped (out of memory?); try a smaller request") from None
        finally:
            self.waiting -= 1

    def close(self) -> None:
        """Stops the worker processes, killing any in the middle of a request
        (the next request starts new ones)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            p.kill()
        for p in procs:
            p.join(5)


class App:
    """The endpoints over a fixed set of tokenizers (name -> tokenizer)."""

    def __init__(self, tokenizers: Mapping[str, TokenizerLike]) -> None:
        if not tokenizers:
            raise ArgumentError("bytepair serve needs at least one tokenizer", name="tokenizers")
        self.tokenizers = dict(tokenizers)
        self.assets = _load_assets()
        self.workers = _Workers(self.tokenizers)

    def _tokenizer_names(self, data: Mapping[str, Any]) -> list[str]:
        names = data.get("tokenizers")
        if names is None:
            return list(self.tokenizers)[:LIMITS["tokenizers"]]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ApiError(422, "'tokenizers' must be a list of tokenizer names")
        if len(names) > LIMITS["tokenizers"]:
            raise ApiError(413, f"at most {LIMITS['tokenizers']} tokenizers per request, got {len(names)}")
        for n in names:
            if n not in self.tokenizers:
                raise ApiError(404, f"unknown tokenizer {n!r}; this server has: {', '.join(self.tokenizers)}")
        return list(dict.fromkeys(names))

    # -- pages

    async def index(self, request: Request) -> Response:
        return Response(self.assets["index.html"], media_type=ASSETS["index.html"])

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in self.assets or name == "index.html":
            raise HTTPException(404)
        return Response(self.assets[name], media_type=ASSETS[name])

    # -- api

    async def info(self, request: Request) -> Response:
        toks = []
        for name, t in self.tokenizers.items():
            if isinstance(t, Tokenizer):
                pat = patterns.name_of(t.pattern) or ("none" if t.pattern is None else "custom")
            else:
                pat = "character-level"
            toks.append({"name": name, "n_vocab": t.n_vocab, "pattern": pat})
        return JSONResponse({"version": __version__, "tokenizers": toks, "patterns": list(PATTERNS),
                             "limits": LIMITS})

    async def encode(self, request: Request) -> Response:
        data = await _json_body(request)
        text = _text(data, "text", LIMITS["encode_text"])
        names = self._tokenizer_names(data)
        return _json_response(await self.workers.run(_in_json, _encode_job, text, names))

    def _trace_args(self, data: Mapping[str, Any]) -> tuple[str, int, str | None]:
        text = _text(data, "text", LIMITS["trace_text"], allow_empty=False)
        merges = _int(data, "merges", 1, LIMITS["merges"])
        pattern = data.get("pattern", "none")
        if pattern not in PATTERNS:
            raise ApiError(422, f"'pattern' must be one of {', '.join(PATTERNS)}, got {pattern!r}")
        pat = None if pattern == "none" else pattern
        size = patterns.distinct_chunk_bytes(pat, text)
        work = size * merges
        if work > LIMITS["trace_work"]:
            what = "the text is one chunk" if pat is None else f"its distinct chunks under {pattern} hold {size:,} bytes"
            raise ApiError(413, f"{what}: bytes x merges is {work:,}, over the limit of {LIMITS['trace_work']:,}; "
                                f"send less text or ask for fewer merges")
        return text, merges, pat

    async def trace(self, request: Request) -> Response:
        text, merges, pattern = self._trace_args(await _json_body(request))
        return _json_response(await self.workers.run(_in_json, _trace_job, text, merges, pattern))

    async def train(self, request: Request) -> Response:
        text, merges, pattern = self._trace_args(await _json_body(request))
        body = await self.workers.run(_train_job, text, merges, pattern)
        return Response(body, media_type="application/json",
                        headers={"Content-Disposition": 'attachment; filename="tokenizer.bytepair.json"'})

    async def compare(self, request: Request) -> Response:
        data = await _json_body(request)
        items = data.get("texts")
        if not isinstance(items, list) or not items:
            raise ApiError(422, "'texts' must be a non-empty list of {\"label\", \"text\"} objects")
        if len(items) > LIMITS["compare_texts"]:
            raise ApiError(413, f"at most {LIMITS['compare_texts']} texts, got {len(items)}")
        texts: dict[str, str] = {}
        for k, item in enumerate(items):
            if not isinstance(item, dict):
                raise ApiError(422, f"texts[{k}] must be an object with 'label' and 'text'")
            label = item.get("label") or f"text {k + 1}"
            if not isinstance(label, str) or len(label) > 100:
                raise ApiError(422, f"texts[{k}].label must be a string of at most 100 characters")
            text = _text(item, "text", LIMITS["compare_text"], allow_empty=False)
            while label in texts:
                label += "'"
            texts[label] = text
        names = self._tokenizer_names(data)
        size = sum(len(t.encode("utf-8")) for t in texts.values())
        work = size * len(names)
        if work > LIMITS["compare_work"]:
            raise ApiError(413, f"{len(texts)} texts of {size:,} bytes in all x {len(names)} tokenizers is {work:,} "
                                f"bytes to encode, over the limit of {LIMITS['compare_work']:,}; "
                                "send less text or fewer tokenizers")
        return _json_response(await self.workers.run(_in_json, _compare_job, texts, names))


def _json_response(body: bytes) -> Response:
    return Response(body, media_type="application/json")


def _cuts(tokens: list[bytes]) -> set[int]:
    out, pos = set(), 0
    for t in tokens[:-1]:
        pos += len(t)
        out.add(pos)
    return out


def _error_response(request: Request, status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _error_response(request, exc.status, exc.message)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    msg = {404: f"not found: {request.url.path}", 405: f"method {request.method} not allowed here"}.get(
        exc.status_code, exc.detail)
    return _error_response(request, exc.status_code, msg)


async def _value_error(request: Request, exc: Exception) -> Response:
    # bytepair's own input checks (e.g. a corpus with nothing to merge): the message names the problem
    return _error_response(request, 400, " ".join(str(exc).split()) or type(exc).__name__)


async def _internal_error(request: Request, exc: Exception) -> Response:
    return _error_response(request, 500, f"internal error ({type(exc).__name__}); see the server's log")


def make_app(tokenizers: Mapping[str, TokenizerLike], *, host: str = "127.0.0.1") -> Starlette:
    """The ASGI app over ``tokenizers`` (name -> Tokenizer). Requests must name
    the host the server binds (or localhost) unless it binds every interface."""
    app = App(tokenizers)
    routes = [
        Route("/", app.index),
        Route("/assets/{name}", app.asset),
        Route("/api/info", app.info),
        Route("/api/encode", app.encode, methods=["POST"]),
        Route("/api/trace", app.trace, methods=["POST"]),
        Route("/api/train", app.train, methods=["POST"]),
        Route("/api/compare", app.compare, methods=["POST"]),
    ]
    any_host = host in ("0.0.0.0", "::", "")
    allowed = ["*"] if any_host else list(dict.fromkeys(["127.0.0.1", "localhost", "::1", "[::1]", host]))
    middleware = [Middleware(_Headers), Middleware(TrustedHostMiddleware, allowed_hosts=allowed)]
    handlers: dict[Any, Any] = {ApiError: _api_error, HTTPException: _http_error, ValueError: _value_error,
                                Exception: _internal_error}
    star = Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
    star.state.workers = app.workers  # closed by whoever runs the app (Server.stop, serve)
    return star


__all__ = ["LIMITS", "PATTERNS", "ApiError", "make_app"]
