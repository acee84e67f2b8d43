"""What the tests of a running ``bytepair serve`` share: one HTTP call."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request


def call(url, path, body=None, raw=None, timeout=300):
    """POSTs ``body`` as JSON (or the bytes ``raw``; GET when neither) to
    ``url + path``; returns ``(status, payload bytes, seconds)``, an HTTP error
    status included."""
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"})
    t = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, payload = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    return status, payload, time.monotonic() - t
