"""The welcome of an enrollment made in the participant's quiet hours (bot.services.welcome):
through the researcher API, it is held by a `greeting` timer until their quiet hours end, the
answer says until when, and it goes out then; a text from them first is answered instead."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from tests.scenarios.harness import Harness, local

QUIET = {"INTERVENTION": "walk-control", "QUIET_HOURS": "22:00-08:00"}


def greetings(h: Harness) -> list[datetime]:
    """When each greeting was queued."""
    return [e.occurred_at for e in h.events("message.queued") if e.data.kind == "greeting"]


def test_a_welcome_due_in_quiet_hours_waits_for_their_end(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(**QUIET)
    h.clock.set(local("23:30"))  # Toronto, inside 22:00-08:00
    morning = local("08:00", days=1)
    response = h.enroll()
    assert response.status_code == 201
    body = response.get_json()
    held = datetime.fromisoformat(body["welcome_at"].replace("Z", "+00:00"))
    assert held == morning.astimezone(UTC)
    assert "quiet hours" in body["message"] and "held until" in body["message"]
    (timer,) = [t for t in h.data("timer.scheduled") if t.kind == "greeting"]
    assert timer.due_at == morning and timer.payload == {"reason": "quiet_hours"}
    assert h.outbound() == [] and greetings(h) == []
    h.until(morning - timedelta(minutes=1))
    assert h.outbound() == []
    h.until(morning + timedelta(minutes=1))
    assert greetings(h) == [morning]  # and the step's first question with it
    assert {e.occurred_at for e in h.events("message.queued")} == {morning}
    assert len(h.outbound()) == len(h.events("message.queued"))


def test_outside_quiet_hours_the_welcome_goes_at_once(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(**QUIET)
    h.clock.set(local("09:15"))
    response = h.enroll()
    assert "welcome_at" not in response.get_json()
    assert response.get_json()["message"] == "Conversation participant enrolled successfully"
    assert [t for t in h.data("timer.scheduled") if t.kind == "greeting"] == []
    assert greetings(h) == [local("09:15")]
    assert len(h.outbound()) == len(h.events("message.queued")) >= 1


def test_a_text_before_the_held_welcome_is_answered_and_cancels_it(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(**QUIET)
    h.clock.set(local("23:30"))
    h.enroll()
    (timer,) = [t for t in h.data("timer.scheduled") if t.kind == "greeting"]
    h.text("hello?")
    cancelled = [t.timer_id for t in h.data("timer.cancelled")]
    assert timer.timer_id in cancelled
    answered = len(h.outbound())
    assert answered >= 1  # an answer to a text is not the engine texting on its own
    h.until(local("09:00", days=1))
    assert greetings(h) == [] and len(h.outbound()) == answered
