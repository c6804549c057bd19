"""An alert nobody acknowledges is sent again, wider, by a durable timer that survives restarts."""

from __future__ import annotations

from datetime import timedelta

from bot.runtime.bootstrap import build_services
from bot.store.event_types.alerts import AlertAcknowledged
from tests.conversation.flow.conftest import PHONE, SUPERVISOR, Conversation

CRISIS = "honestly I want to kill myself"
ESCALATION = "+15005550177"


def _crisis(make_conversation, **env: str) -> Conversation:
    conversation = make_conversation(
        ESCALATION_PHONES=ESCALATION, ALERT_ESCALATE_MINUTES="20", **env
    )
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)
    conversation.run()
    return conversation


def _restarted(conversation: Conversation) -> Conversation:
    """The same database and clock, a new store, engine, handler and worker: a new process."""
    services = build_services(conversation.services.settings, clock=conversation.clock)
    restarted = Conversation(services, conversation.fake)
    restarted.pid = conversation.pid
    return restarted


def _escalations(conversation: Conversation) -> list:
    return [m for m in conversation.queued("alert") if (m.body or "").startswith("ESCALATED")]


def test_a_crisis_alert_sets_an_escalation_timer_for_the_configured_minutes(make_conversation):
    conversation = _crisis(make_conversation)

    (timer,) = [t for t in conversation.data("timer.scheduled") if t.kind == "alert_escalation"]
    (alert,) = conversation.data("alert.raised")
    assert timer.payload == {"alert_id": alert.alert_id}
    assert timer.due_at == conversation.clock.now() + timedelta(minutes=20)


def test_an_unacknowledged_alert_escalates_after_a_restart(make_conversation):
    conversation = _crisis(make_conversation)
    conversation.clock.advance(timedelta(minutes=19))
    conversation.fire_timers()
    assert _escalations(conversation) == []

    restarted = _restarted(conversation)
    restarted.clock.advance(timedelta(minutes=1))
    restarted.fire_timers()
    restarted.run()

    texts = _escalations(restarted)
    assert sorted(t.to_address for t in texts) == sorted([SUPERVISOR, ESCALATION])
    body = texts[0].body or ""
    assert "not acknowledged within 20 minutes" in body and "Reply ACK" in body
    assert PHONE not in body and "kill" not in body
    restarted.services.close()


def test_an_acknowledged_alert_does_not_escalate(make_conversation):
    conversation = _crisis(make_conversation)
    (alert,) = conversation.data("alert.raised")
    conversation.append(AlertAcknowledged(alert_id=alert.alert_id, by="api:x", via="api"))

    conversation.clock.advance(timedelta(minutes=20))
    conversation.fire_timers()
    conversation.run()

    assert _escalations(conversation) == []
    (skipped,) = conversation.data("timer.skipped")
    assert skipped.reason == "acknowledged"


def test_escalation_is_off_at_zero_minutes(make_conversation):
    conversation = make_conversation(ALERT_ESCALATE_MINUTES="0", ESCALATION_PHONES=ESCALATION)
    conversation.enroll(source="auto")
    conversation.receive(CRISIS)
    conversation.run()

    assert [t for t in conversation.data("timer.scheduled") if t.kind == "alert_escalation"] == []


def test_escalation_reaches_the_escalation_phones_even_without_supervisors(make_conversation):
    conversation = _crisis(make_conversation, SUPERVISOR_PHONES="")

    conversation.clock.advance(timedelta(minutes=20))
    conversation.fire_timers()
    conversation.run()

    assert [t.to_address for t in _escalations(conversation)] == [ESCALATION]
