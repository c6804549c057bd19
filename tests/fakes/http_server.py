"""A threaded WSGI server on a free loopback port, run in a daemon thread for tests."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

from waitress.server import create_server
from werkzeug.serving import WSGIRequestHandler, make_server


class _QuietHandler(WSGIRequestHandler):
    """Request handler that keeps the access log out of the test output."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class _Stopped:
    """A server usable as a context manager: stopped when the block ends."""

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class LocalServer(_Stopped):
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


class KeepAliveServer(_Stopped):
    """Like LocalServer, but served by waitress, which keeps HTTP/1.1 connections open between
    requests as a real API does (werkzeug's server closes every connection after its response).
    For fakes whose clients hold a connection pool: the openai SDK's."""

    def __init__(self, app, threads: int = 8) -> None:
        self._server = create_server(app, host="127.0.0.1", port=0, threads=threads)
        self.url = f"http://127.0.0.1:{self._server.effective_port}"
        self._thread = threading.Thread(
            target=self._server.run,
            name=f"local-server-{self._server.effective_port}",
            daemon=True,
        )
        self._thread.start()
        self._stopped = False

    def stop(self) -> None:
        """Finish the requests being answered, then close every connection and the listening
        socket; safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        server = self._server
        # The worker threads first: an answer still being written wakes the loop through the
        # trigger, which must still be open then.
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)

        def close_all() -> None:  # run by the server's own loop thread
            for dispatcher in list(server._map.values()):
                if dispatcher is not server.trigger:
                    dispatcher.close()
            server.close()  # the listening socket and the trigger: the loop's map is empty

        try:
            server.trigger.pull_trigger(close_all)
        except OSError:
            # The loop dropped its trigger already (seen once in a whole-suite run: EBADF at
            # teardown, after a test whose requests hung past the client's timeout); nothing
            # can wake it now, so close what is left from here: the loop ends on an empty map.
            close_all()
        self._thread.join(timeout=5)
