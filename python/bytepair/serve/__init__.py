"""``bytepair serve``: a local web page to look at tokens, step through training
and compare tokenizers, served offline (needs the ``serve`` extra:
``pip install 'bytepair[serve]'``, i.e. starlette and uvicorn).

>>> from bytepair import get_encoding
>>> from bytepair.serve import make_app
>>> app = make_app({"gpt2": get_encoding("gpt2")})
>>> sorted(r.path for r in app.routes)[:3]
['/', '/api/compare', '/api/encode']

:func:`serve` runs it until interrupted; :class:`Server` runs it in a thread
(tests, notebooks) on a port of its own.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading
import time
import webbrowser
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ArgumentError
from ..inspect.common import TokenizerLike
from .app import LIMITS, PATTERNS, ApiError, make_app


class PortInUseError(OSError):
    """The port asked for is taken (one line naming it)."""


def bind(host: str = "127.0.0.1", port: int = 8765) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free port). A taken port
    raises :class:`PortInUseError` naming it."""
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise ArgumentError(f"port must be 0..65535, got {port!r}", name="port")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise OSError(f"cannot listen on {host!r}: {e.strerror}") from None
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise PortInUseError(f"port {port} on {host} is in use; stop what is using it or pick another "
                                 f"with --port") from None
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    return sock


def loopback(host: str) -> bool:
    """True when ``host`` is reachable from this machine only (``127.0.0.1``, ``::1``, ``localhost``).

    >>> loopback("127.0.0.1"), loopback("localhost"), loopback("0.0.0.0")
    (True, True, False)
    """
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_of(sock: socket.socket, host: str) -> str:
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else host
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/"


def _uvicorn_server(app: Any) -> Any:
    import uvicorn

    # plain HTTP/1.1 on asyncio; no websockets (the page uses none), no proxy headers trusted, logging left as it is
    # on Ctrl-C or SIGTERM, requests in flight get a second to finish, then
    # the server stops (and its workers with it: the trace of a long text runs a minute)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            http="h11", ws="none", loop="asyncio", interface="asgi3", proxy_headers=False,
                            log_config=None, timeout_graceful_shutdown=1)
    return uvicorn.Server(config)


class Server:
    """The app running in a background thread (``with Server(toks) as s: s.url``)."""

    def __init__(self, tokenizers: Mapping[str, TokenizerLike], host: str = "127.0.0.1", port: int = 0) -> None:
        self.sock = bind(host, port)
        self.url = url_of(self.sock, host)
        self._app = make_app(tokenizers, host=host)
        self._server = _uvicorn_server(self._app)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> Server:
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the server thread stopped while starting")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self.sock.close()
        self._app.state.workers.close()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _print_line(line: str) -> None:
    print(line, flush=True)  # at once, also into a pipe or a log file


def serve(tokenizers: Mapping[str, TokenizerLike], host: str = "127.0.0.1", port: int = 8765, *, open_browser: bool = False,
          announce: Callable[[str], None] | None = None) -> None:
    """Serves the page until interrupted (Ctrl-C); ``announce`` (default: print
    and flush) gets the line with the address."""
    say = announce if announce is not None else _print_line
    sock = bind(host, port)
    url = url_of(sock, host)
    app = make_app(tokenizers, host=host)
    server = _uvicorn_server(app)
    where = "" if loopback(host) else f"; listening on {host} port {sock.getsockname()[1]}: open to the network"
    line = f"bytepair serve: {url}  ({', '.join(tokenizers)}{where}; Ctrl-C stops)"

    def announce_when_started() -> None:
        # once the server has started, its Ctrl-C handler is in place: a
        # Ctrl-C sent on seeing the line stops it
        while not server.started:
            if server.should_exit:
                return
            time.sleep(0.01)
        say(line)
        if open_browser:
            webbrowser.open(url)

    threading.Thread(target=announce_when_started, daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        app.state.workers.close()


__all__ = ["LIMITS", "PATTERNS", "ApiError", "PortInUseError", "Server", "bind", "loopback", "make_app", "serve"]
