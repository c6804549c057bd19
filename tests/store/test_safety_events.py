"""The safety verdicts and the retry of a failed turn are stored and read back as they were."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.event_types.retries import TurnRetryDue
from bot.store.event_types.safety import SafetyClassified, SafetyScreened
from bot.store.events import participant_stream


def test_the_safety_verdicts_and_a_retry_round_trip(store: EventStore) -> None:
    written = [
        SafetyScreened(
            message_event_id="m1",
            crisis=True,
            rule="en.suicide.direct",
            category="suicide",
            language="en",
        ),
        SafetyClassified(
            message_event_id="m1",
            verdict="crisis",
            category="suicide",
            severity="high",
            reason="States an intent to die.",
            call_id="c1",
            latency_ms=12.5,
        ),
        SafetyClassified(message_event_id="m2", verdict="no_verdict", error="timed out"),
        TurnRetryDue(timer_id="t1", attempt=2, trigger="inbound", message_event_id="m2"),
    ]
    store.append(participant_stream("p1"), written)

    loaded = store.load(participant_stream("p1"))

    assert [e.data for e in loaded] == written
    assert [e.event_type for e in loaded] == [
        "safety.screened",
        "safety.classified",
        "safety.classified",
        "turn.retry_due",
    ]
