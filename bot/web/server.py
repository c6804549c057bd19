"""The embedded WSGI server of `tandem serve` (and of the benchmark's no-op baseline): waitress.

Waitress, not Werkzeug's development server (a thread per connection, unbounded: under load
the threads outnumbered the connection pool and requests failed) and not gunicorn (a pre-fork
process manager that wants to own the process, while `tandem serve` runs its workers,
dispatcher and scheduler in this one). Waitress is maintained, pure Python, runs in-process,
and serves from a fixed pool of threads while its I/O loop buffers whole requests and
responses, so slow clients hold no thread and a burst queues in the server, not in the
database pool.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

from waitress import wasyncore
from waitress.server import create_server

log = logging.getLogger(__name__)

# Web threads: the webhook is one short write transaction, so a few threads keep up with
# hundreds of requests a second; with the worker threads they stay within the SQLite pool.
WEB_THREADS = 8


class EmbeddedServer(Protocol):
    def serve_forever(self) -> None: ...

    def shutdown(self) -> None: ...


class _Waitress:
    def __init__(self, app: Any, host: str, port: int, threads: int) -> None:
        # Any: what shutdown uses of it (its trigger, its socket map) is not in waitress's stubs.
        self._server: Any = create_server(
            app, host=host, port=port, threads=threads, ident="tandem"
        )
        self._stopped = threading.Event()

    def serve_forever(self) -> None:
        try:
            self._server.run()  # until every socket of its loop is closed
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop accepting, let the requests in flight finish (5 s at most), then close every
        connection. Sockets are closed by the server's own I/O thread (its trigger runs the
        closing there), never under it; if its trigger is closed already (seen once in CI, cause
        not found), here, so that a stop still ends."""
        server = self._server
        self._pull(lambda: wasyncore.dispatcher.close(server))
        server.task_dispatcher.shutdown(timeout=5)
        self._pull(self._close_all)
        self._stopped.wait(10)

    def _pull(self, thunk: Any) -> None:
        try:
            self._server.trigger.pull_trigger(thunk)
        except OSError as exc:  # the loop can no longer be woken: do it from this thread
            log.warning("web server's trigger is closed (%s): closing its sockets here", exc)
            thunk()

    def _close_all(self) -> None:
        for channel in list(self._server._map.values()):  # noqa: SLF001 - the loop's sockets
            channel.close()


def embedded_server(app: Any, host: str, port: int, threads: int = WEB_THREADS) -> EmbeddedServer:
    """A server for `app` on host:port with `threads` web threads; `serve_forever()` runs it
    until `shutdown()`."""
    return _Waitress(app, host, port, threads)
