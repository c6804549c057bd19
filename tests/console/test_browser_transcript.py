"""A long transcript in Chromium: paged back to its first message with the page's links, and a
message found by search across participants."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from bot.store.event_types import MessageQueued
from bot.store.events import participant_stream
from tests.console.test_browser import (  # noqa: F401  (the module's fixtures)
    PASSWORD,
    Study,
    _sign_in,
    _staff,
    browser,
    study,
)
from tests.factories import enrolled, received

pytestmark = pytest.mark.slow

ADA, BO = "+14155552671", "+14155552672"


def _person(study: Study, phone: str, name: str, count: int) -> str:  # noqa: F811
    person = enrolled(phone=phone, name=name)
    pid = person.participant_id
    events: list = [person]
    for i in range(1, count + 1):
        body = f"{name} message {i:03d}"
        if i % 2:
            events.append(received(sid=f"SM{pid[:8]}{i:04d}", body=body, phone=phone))
        else:
            events.append(
                MessageQueued(
                    outbox_id=f"o-{pid[:8]}-{i}", to_address=phone, channel="sms", body=body
                )
            )
    study.services.store.append(participant_stream(pid), events, expected_version=0)
    return pid


def test_a_300_message_transcript_is_paged_to_its_first_message_and_searched(
    browser: Browser,  # noqa: F811
    study: Study,  # noqa: F811
) -> None:
    ada = _person(study, ADA, "Ada", 300)
    _person(study, BO, "Bo", 20)
    study.services.store.append(
        participant_stream(ada), [received(sid="SMcrisis", body="nobody would miss me", phone=ADA)]
    )
    _staff(study, "res@example.org", "researcher")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "res@example.org", PASSWORD)

    page.goto(f"{study.url}/console/participants/{ada}")
    bubbles = page.locator("#transcript .bubble .said")
    expect(bubbles.last).to_have_text("nobody would miss me")
    for _ in range(3):
        page.locator("#transcript-pager-top a.older").click()
    expect(bubbles.first).to_have_text("Ada message 001")
    expect(page.locator("#transcript-pager-top .first-message")).to_be_visible()
    page.locator("#transcript-pager-top a.newer").click()
    expect(bubbles.first).to_have_text("Ada message 002")  # the next page starts after it

    page.click("nav >> text=Search")
    page.fill("#search-text", "message 007")
    page.click("#search-button")
    matches = page.locator("#results .match")
    expect(matches).to_have_count(2)  # Ada's and Bo's
    page.locator("#results .match a").first.click()
    expect(page.locator("#transcript .bubble .said").last).to_contain_text("message 007")
