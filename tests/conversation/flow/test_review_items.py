"""Review items in the worker's flow: a learned-line score in the review band raises one
(quoting the message, texting nobody, sending the participant only the normal reply), and its
durable timer escalates it to a crisis alert unless a person cleared it first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.services import reviews
from tests.conversation.flow.conftest import SUPERVISOR, Conversation
from tests.fakes.learned_line import TableLine
from tests.fakes.openai_api import ScriptedReply
from tests.web.test_erase import _postgres_hits, _raw_sqlite_bytes

MIDDLE = "gave my console to my cousin, won't need it"
HIGH = "tonight is the night, bottle is ready"
LINE = TableLine({MIDDLE: 0.6, HIGH: 0.95})
THRESHOLDS = {"SAFETY_ALERT_THRESHOLD": "0.9", "SAFETY_REVIEW_THRESHOLD": "0.5"}


def _with_line(conversation: Conversation) -> Conversation:
    """The conversation's worker, its learned line the table (as production loads the model)."""
    handler = build_handler(conversation.services, learned_line=lambda: LINE)
    conversation.worker = Worker(conversation.services, handler, "test-worker")
    return conversation


@pytest.fixture
def reviewed(make_conversation: Callable[..., Conversation]) -> Conversation:
    conversation = _with_line(
        make_conversation(SAFETY_LEARNED="on", REVIEW_ESCALATE_MINUTES="45", **THRESHOLDS)
    )
    conversation.enroll(source="auto")
    conversation.receive(MIDDLE)
    conversation.fake.script(ScriptedReply.text("Sounds like a kind thing to do."))
    conversation.run()
    return conversation


def test_a_review_band_score_raises_a_review_item_quoting_the_message(
    reviewed: Conversation,
) -> None:
    (item,) = reviewed.data("alert.raised")
    assert (item.kind, item.severity, item.rule, item.notify_supervisors) == (
        "review",
        "review",
        "learned",
        False,
    )
    assert item.quote == MIDDLE and MIDDLE not in item.summary
    (timer,) = [t for t in reviewed.data("timer.scheduled") if t.kind == "review_escalation"]
    assert timer.payload == {"alert_id": item.alert_id}
    assert timer.due_at == reviewed.clock.now() + timedelta(minutes=45)
    row = reviewed.store.projection_row("alerts", item.alert_id)
    assert row is not None and (row["status"], row["severity"]) == ("open", "review")


def test_a_review_item_sends_the_participant_only_the_normal_reply_and_texts_nobody(
    reviewed: Conversation,
) -> None:
    assert reviewed.bodies() == ["Sounds like a kind thing to do."]
    assert reviewed.queued("alert") == [] and reviewed.queued("notice") == []


def test_an_alert_band_score_raises_the_crisis_alert_and_no_review_item(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = _with_line(make_conversation(SAFETY_LEARNED="on", **THRESHOLDS))
    conversation.enroll(source="auto")
    conversation.receive(HIGH)
    conversation.run()

    assert [(a.kind, a.severity) for a in conversation.data("alert.raised")] == [
        ("crisis", "critical")
    ]
    assert not [t for t in conversation.data("timer.scheduled") if t.kind == "review_escalation"]


def test_an_unreviewed_item_becomes_a_crisis_alert_when_its_timer_fires_after_a_restart(
    reviewed: Conversation, request: pytest.FixtureRequest
) -> None:
    (item,) = reviewed.data("alert.raised")
    services = build_services(reviewed.services.settings, clock=reviewed.clock)
    request.addfinalizer(services.close)
    restarted = _with_line(Conversation(services, reviewed.fake))
    restarted.pid = reviewed.pid

    restarted.clock.advance(timedelta(minutes=45))
    restarted.fire_timers()
    restarted.run()

    (escalated,) = restarted.data("review.escalated")
    assert (escalated.alert_id, escalated.via, escalated.minutes) == (item.alert_id, "timer", 45)
    crisis = restarted.data("alert.raised")[-1]
    assert (crisis.alert_id, crisis.kind, crisis.quote) == (
        escalated.crisis_alert_id,
        "crisis",
        MIDDLE,
    )
    (text,) = restarted.queued("alert")
    assert text.to_address == SUPERVISOR and MIDDLE not in (text.body or "")
    assert restarted.queued("notice") == []  # the participant is sent nothing for it
    row = restarted.store.projection_row("alerts", item.alert_id)
    assert row is not None and row["status"] == "resolved"
    assert "unreviewed after 45 minutes" in row["resolution_note"]


def test_an_item_cleared_as_not_a_crisis_does_not_escalate(reviewed: Conversation) -> None:
    (item,) = reviewed.data("alert.raised")
    reviews.dismiss(reviewed.store, item.alert_id, actor="staff:sup@example.org", via="console")

    reviewed.clock.advance(timedelta(minutes=45))
    reviewed.fire_timers()
    reviewed.run()

    assert reviewed.data("review.escalated") == [] and reviewed.queued("alert") == []
    (skipped,) = reviewed.data("timer.skipped")
    assert skipped.reason == "reviewed"


def test_the_quoted_message_is_stored_sealed_only_even_once_escalated(
    reviewed: Conversation, database_url: str
) -> None:
    reviewed.clock.advance(timedelta(minutes=45))
    reviewed.fire_timers()
    reviewed.run()
    assert [a.quote for a in reviewed.data("alert.raised")] == [MIDDLE, MIDDLE]

    if database_url.startswith("sqlite"):
        assert MIDDLE.encode() not in _raw_sqlite_bytes(database_url)
    else:
        assert _postgres_hits(database_url, MIDDLE) == []
