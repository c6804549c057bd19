"""A threaded WSGI server on a free loopback port, run in a daemon thread for tests."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

from werkzeug.serving import WSGIRequestHandler, make_server


class _QuietHandler(WSGIRequestHandler):
    """Request handler that keeps the access log out of the test output."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class LocalServer:
    """Serves a WSGI app on 127.0.0.1 at a random free port from construction until stop()."""

    def __init__(self, app) -> None:
        self._server = make_server(
            "127.0.0.1", 0, app, threaded=True, request_handler=_QuietHandler
        )
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        # A short poll interval keeps stop() fast; shutdown() waits for the next poll.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"local-server-{self._server.server_port}",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    def stop(self) -> None:
        """Stop accepting requests and close the listening socket; safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._thread.join(timeout=5)
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
