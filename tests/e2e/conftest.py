"""The whole pipe in one test process: a real HTTP server, workers, dispatchers, a fake Twilio."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import requests

from bot.channel.factory import build_messenger
from bot.runtime.bootstrap import build_services
from bot.runtime.threads import Runtime, RuntimeOptions
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.web import create_app
from tests.conftest import TEST_MASTER_KEY
from tests.e2e.echo import echo
from tests.factories import enrolled
from tests.fakes.http_server import LocalServer
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import settings_for
from tests.web.twilio_requests import INBOUND, PUBLIC, message, new_sid, sign


@dataclass
class Pipe:
    services: Services
    server: LocalServer
    twilio: FakeTwilio

    def enroll(self, phone: str) -> str:
        first = enrolled(phone=phone)
        self.services.store.append(participant_stream(first.participant_id), [first])
        return first.participant_id

    def text(self, phone: str, body: str, sid: str | None = None) -> requests.Response:
        """Deliver an inbound message as Twilio does: a signed form POST over HTTP."""
        form = message(body, sender=phone, MessageSid=sid or new_sid())
        headers = {"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)}
        return requests.post(self.server.url + INBOUND, data=form, headers=headers, timeout=10)

    def wait_for(self, condition: Callable[[], bool], seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("the pipe did not get there in time")
            time.sleep(0.05)

    def bodies_to(self, phone: str) -> list[str]:
        return [m.form.get("Body", "") for m in self.twilio.messages_to(phone)]


@pytest.fixture
def pipe(database_url: str) -> Iterator[Pipe]:
    twilio = FakeTwilio()
    settings = settings_for(
        database_url,
        MESSENGER="twilio",
        TANDEM_MASTER_KEY=TEST_MASTER_KEY,
        SUPERVISOR_PHONES="none",
        TWILIO_API_BASE_URL=twilio.url,
        TWILIO_ACCOUNT_SID=twilio.account_sid,
        TWILIO_AUTH_TOKEN=twilio.auth_token,
    )
    services = build_services(settings)
    server = LocalServer(create_app(services))
    runtime = Runtime(
        services,
        echo,
        build_messenger(settings),
        RuntimeOptions(workers=4, dispatchers=2, scheduler=False),
    )
    runtime.start()
    try:
        yield Pipe(services, server, twilio)
    finally:
        runtime.stop()
        server.stop()
        twilio.stop()
        services.close()
