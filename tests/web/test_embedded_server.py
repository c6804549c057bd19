"""`tandem serve`'s embedded server (waitress): a signed webhook over real HTTP, then a stop."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import pytest

from bot.store.services import Services
from bot.web import create_app
from bot.web.server import embedded_server
from tests.web.twilio_requests import INBOUND, PUBLIC, enroll, message, rows, sign


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_signed_webhook_over_http_is_recorded_and_the_server_stops_on_shutdown(
    services: Services,
) -> None:
    enroll(services)
    port = _free_port()
    server = embedded_server(create_app(services), "127.0.0.1", port, threads=2)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    form = message("over the wire")
    request = Request(
        f"http://127.0.0.1:{port}{INBOUND}",
        data=urlencode(form).encode(),
        headers={"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)},
    )
    try:
        with urlopen(request, timeout=10) as response:
            status, body = response.status, response.read().decode()
    finally:
        server.shutdown()
    serving.join(timeout=10)
    assert status == 200 and body.endswith("<Response/>")
    assert [w["kind"] for w in rows(services.store, "work_items", kind="inbound")] == ["inbound"]
    assert not serving.is_alive()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # no longer listening


# Closing the trigger by hand can catch a waitress task thread still finishing the /health
# answer, which then fails on the closed descriptor: collateral of the fault this test plants,
# not what it checks (that the stop still ends the server).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_stop_ends_the_server_even_when_its_trigger_is_closed_already(
    services: Services,
) -> None:
    """A trigger found closed at the stop (seen once in CI): `shutdown` closes the sockets
    itself instead of raising (it raised OSError, and serve hung)."""
    port = _free_port()
    server = embedded_server(create_app(services), "127.0.0.1", port, threads=2)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    with urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as response:
        assert response.status == 200
    server._server.trigger.close()  # type: ignore[attr-defined]  # noqa: SLF001
    server.shutdown()
    serving.join(timeout=10)
    assert not serving.is_alive()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0  # no longer listening
