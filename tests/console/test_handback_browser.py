"""Hand-back in Chromium with a message waiting: each of the three choices, the events it
records and what the participant receives (through the signed webhook and the fake Twilio)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from bot.console import accounts
from bot.core.clock import SystemClock
from bot.store.events import participant_stream
from tests.console import test_browser as base
from tests.console.test_browser import ADA, PASSWORD, Study, _sign_in
from tests.factories import enrolled

# The browser (Chromium, per module) and the study (app, fake Twilio, bot) of test_browser.
browser = base.browser
study = base.study

pytestmark = pytest.mark.slow
WAITING = "Moving more"


def _taken_over_with_a_waiting_message(browser: Browser, study: Study) -> tuple[Page, str]:
    code = accounts.add(
        study.services.store, "res@example.org", "researcher", "cli", SystemClock().now()
    )
    data = enrolled(phone=ADA, name="Ada", intervention="demo")
    pid = data.participant_id
    study.services.store.append(participant_stream(pid), [data], expected_version=0)
    study.run_bot()  # the greeting and its question
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "res@example.org", code)
    page.fill("#password", PASSWORD)
    page.fill("#repeated", PASSWORD)
    page.click("main button[type=submit]")
    page.goto(f"{study.url}/console/participants/{pid}")
    page.click("#take-over")
    expect(page.locator("#takeover .notice").first).to_contain_text("The bot is paused")
    study.text_in(WAITING, ADA)
    study.run_bot()  # the bot's turn waits
    page.reload()
    expect(page.locator("#waiting-messages")).to_contain_text("1")
    expect(page.locator(".waiting-message")).to_contain_text(WAITING)
    expect(page.locator("#hand-back")).to_have_count(0)  # no hand-back without a choice
    return page, pid


def _events(study: Study, pid: str, event_type: str) -> list:
    return [
        e for e in study.services.store.load(participant_stream(pid)) if e.event_type == event_type
    ]


def _to_ada(study: Study) -> list[str]:
    return [r.form.get("Body") or "" for r in study.fake.messages_to(ADA)]


@pytest.mark.parametrize("choice", ["answer", "bot", "handled"])
def test_hand_back_asks_what_to_do_with_a_waiting_message(
    browser: Browser, study: Study, choice: str
) -> None:
    page, pid = _taken_over_with_a_waiting_message(browser, study)
    (message,) = _events(study, pid, "message.received")
    before = _to_ada(study)

    page.click(f"#hand-back-{choice}")
    if choice == "answer":
        # The takeover stays; staff answer, and the hand-back then needs no choice.
        expect(page.locator("#staff-text")).to_be_visible()
        assert _events(study, pid, "takeover.ended") == []
        page.fill("#staff-text", "Sam here: tell me more.")
        page.click("#send-staff-message")
        page.click("#hand-back")
    expect(page.locator("#take-over")).to_be_visible()
    study.run_bot()

    (ended,) = _events(study, pid, "takeover.ended")
    (handled,) = _events(study, pid, "message.handled")
    work = study.services.store.projection_row("work_items", message.event_id)
    after = _to_ada(study)[len(before) :]
    assert handled.data.message_id == message.event_id
    assert handled.data.by == "staff:res@example.org"
    if choice == "bot":
        assert (ended.data.waiting, ended.data.messages) == ("bot", [message.event_id])
        assert handled.data.how == "bot"
        assert work["status"] == "done" and len(after) >= 1  # the bot answered it
    else:
        expected = "none" if choice == "answer" else "handled"
        assert ended.data.waiting == expected
        assert handled.data.how == ("answered" if choice == "answer" else "marked")
        assert work["status"] == "done"
        # The bot never took the message as its turn's input: nothing from it after the hand-back.
        assert after == (["Sam here: tell me more."] if choice == "answer" else [])
        completed = [e.data for e in _events(study, pid, "work.completed")]
        assert any(c.work_id == message.event_id and c.skipped for c in completed)
    page.goto(f"{study.url}/console/inbox")
    expect(page.locator(f"#message-{message.event_id}")).to_have_count(0)
