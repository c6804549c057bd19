"""WhatsApp start: enrollment greets with the approved template, or is refused saying what to
set; when the participant writes, the held messages are sent once each, in order (through the
signed webhook, the real dispatcher and the twilio SDK on the fake Twilio)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bot.core.clock import SystemClock
from bot.runtime.bootstrap import build_services
from bot.web import create_app
from tests.conftest import fresh_database
from tests.console.test_browser import Study
from tests.fakes.http_server import LocalServer
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH, BASE

TEMPLATE = "HX" + "ab12" * 8
ADA = "+14155552671"


def _study(request: pytest.FixtureRequest, tmp_path: Path, **env: str) -> Iterator[Study]:
    with FakeTwilio() as fake:
        settings = settings_for(
            fresh_database("sqlite", request, tmp_path),
            TANDEM_MASTER_KEY="m" * 40,
            MESSENGER="twilio",
            TWILIO_API_BASE_URL=fake.url,
            INTERVENTION="demo",
            SUPERVISOR_PHONES="+15005550111",
            **env,
        )
        services = build_services(settings, clock=SystemClock())
        server = LocalServer(create_app(services))
        try:
            yield Study(services, server, fake)
        finally:
            server.stop()
            services.close()


@pytest.fixture
def templated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Study]:
    yield from _study(request, tmp_path, WHATSAPP_TEMPLATE_SID=TEMPLATE)


@pytest.fixture
def untemplated(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Study]:
    yield from _study(request, tmp_path)


def _enroll(study: Study, channel: str = "whatsapp") -> requests.Response:
    return requests.post(
        study.url + BASE,
        json={"phone_number": ADA, "name": "Ada", "channel": channel, "intervention": "demo"},
        headers=AUTH,
        timeout=10,
    )


def test_a_whatsapp_enrollment_without_a_template_is_refused_saying_what_to_set(
    untemplated: Study,
) -> None:
    answer = _enroll(untemplated)

    assert answer.status_code in (400, 422), answer.text
    said = answer.text
    assert "whatsapp_template: HX" in said and "WHATSAPP_TEMPLATE_SID" in said
    assert _enroll(untemplated, channel="sms").status_code == 201  # SMS needs no template


def _sent(study: Study) -> list[tuple[str, str]]:
    """What reached Twilio for Ada: ("template", its SID) or ("text", the body), in order."""
    out = []
    for m in study.fake.messages_to(f"whatsapp:{ADA}"):
        if m.form.get("ContentSid"):
            out.append(("template", m.form["ContentSid"]))
        else:
            out.append(("text", m.form.get("Body", "")))
    return out


def test_the_greeting_goes_as_the_template_and_held_messages_follow_once_each_in_order(
    templated: Study,
) -> None:
    assert _enroll(templated).status_code == 201
    templated.run_bot()

    greeted = _sent(templated)
    assert greeted == [("template", TEMPLATE)], greeted

    templated.text_in("hello", f"whatsapp:{ADA}")
    templated.run_bot()

    after = _sent(templated)[1:]
    texts = [body for kind, body in after]
    assert all(kind == "text" for kind, _ in after)
    assert len(texts) == len(set(texts)), f"a message sent twice: {texts}"
    assert after == GOLDEN, after
    carried = templated.fake.messages_to(f"whatsapp:{ADA}")[0].form["ContentVariables"]
    assert "This is the Tandem demo" in carried  # the greeting's text, as {{1}}


# Once the window opens: the held question once, not "let's pick a topic" and a second copy.
GOLDEN = [
    (
        "text",
        "What would you like a tip about? Reply with a number:\n"
        "1. Sleep\n2. Moving more\n3. Stress",
    )
]
