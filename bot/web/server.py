"""The embedded WSGI server of `tandem serve` (and of the benchmark's no-op baseline)."""

from __future__ import annotations

from typing import Any, Protocol


class EmbeddedServer(Protocol):
    def serve_forever(self) -> None: ...

    def shutdown(self) -> None: ...


def embedded_server(app: Any, host: str, port: int) -> EmbeddedServer:
    """A threaded server for `app` on host:port; `serve_forever()` runs it until `shutdown()`."""
    from werkzeug.serving import make_server

    return make_server(host, port, app, threaded=True)
