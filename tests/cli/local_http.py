"""Loopback HTTP for tests that run `tandem serve` as a subprocess: a free port, a POST."""

from __future__ import annotations

import socket
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, data: bytes, content_type: str) -> int:
    """POST `data` and return the status (urllib raises on a 4xx/5xx)."""
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status
