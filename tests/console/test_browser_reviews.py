"""The review queue in Chromium: messages sent through the signed webhook, scored by a learned
line in its review band (a table standing in for the model, handed to the composition root),
cleared by a supervisor with each of the two buttons."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from bot.channel.dispatcher import Dispatcher
from bot.channel.factory import build_messenger
from bot.core.clock import SystemClock
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.store.events import participant_stream
from bot.web import create_app
from tests.conftest import fresh_database
from tests.console.test_browser import (  # noqa: F401  (the module's browser fixture)
    PASSWORD,
    Study,
    _sign_in,
    _staff,
    browser,
)
from tests.factories import enrolled
from tests.fakes.http_server import LocalServer
from tests.fakes.learned_line import TableLine
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import settings_for

pytestmark = pytest.mark.slow

SUPERVISOR = "+15005550111"
ADA, BO = "+14155552671", "+14155552672"
KEPT = "gave my console to my cousin, won't need it"
WORRYING = "sorted my affairs today, everything is in the drawer"
LINE = TableLine({KEPT: 0.6, WORRYING: 0.7})


@pytest.fixture
def study(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Study]:
    with FakeTwilio() as fake:
        settings = settings_for(
            fresh_database("sqlite", request, tmp_path),
            TANDEM_MASTER_KEY="m" * 40,
            MESSENGER="twilio",
            SUPERVISOR_PHONES=SUPERVISOR,
            TWILIO_API_BASE_URL=fake.url,
            INTERVENTION="demo",
            SAFETY_LEARNED="on",
            SAFETY_ALERT_THRESHOLD="0.9",
            SAFETY_REVIEW_THRESHOLD="0.5",
        )
        services = build_services(settings, clock=SystemClock())
        server = LocalServer(create_app(services))
        try:
            found = Study(services, server, fake)
            found.worker = Worker(
                services, build_handler(services, learned_line=lambda: LINE), "browser-test"
            )
            found.dispatcher = Dispatcher(services, build_messenger(settings), "d")
            yield found
        finally:
            server.stop()
            services.close()


def test_a_supervisor_clears_review_items_with_each_button(browser: Browser, study: Study) -> None:  # noqa: F811
    store = study.services.store
    pids = []
    for phone, name in ((ADA, "Ada"), (BO, "Bo")):
        person = enrolled(phone=phone, name=name)
        store.append(participant_stream(person.participant_id), [person], expected_version=0)
        pids.append(person.participant_id)
    study.text_in(KEPT, ADA)
    study.text_in(WORRYING, BO)
    study.run_bot()
    assert [m.form.get("Body") for m in study.fake.messages_to(SUPERVISOR)] == []
    _staff(study, "sup@example.org", "supervisor")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "sup@example.org", PASSWORD)
    expect(page.locator("#open-reviews-count")).to_have_text("2")

    page.click("text=Reviews")
    expect(page.locator("#reviews blockquote", has_text=KEPT)).to_be_visible()
    expect(page.locator("#reviews blockquote", has_text=WORRYING)).to_be_visible()
    page.locator("tr", has_text=KEPT).locator("button", has_text="Not a crisis").click()
    expect(page.locator("#reviews blockquote", has_text=KEPT)).to_have_count(0)
    expect(page.locator("#open-reviews-count")).to_have_text("1")
    expect(page.locator("#cleared")).to_contain_text("not a crisis, by staff:sup@example.org")

    page.locator("tr", has_text=WORRYING).locator("button", has_text="Escalate to alert").click()
    expect(page.locator("#empty")).to_have_text("Nothing to review.")
    expect(page.locator("#open-reviews-count")).to_have_count(0)
    expect(page.locator("#open-alerts-count")).to_have_text("1")
    study.run_bot()
    texts = [m.form.get("Body", "") for m in study.fake.messages_to(SUPERVISOR)]
    assert len(texts) == 1 and "crisis (critical)" in texts[0] and WORRYING not in texts[0]
    page.click("text=Alerts")
    page.locator("#alerts a", has_text="crisis (critical)").click()
    expect(page.locator("#quote")).to_have_text(WORRYING)
    kinds = [e.event_type for e in store.load(participant_stream(pids[1]))]
    assert "review.escalated" in kinds
