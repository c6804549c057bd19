"""Readiness episodes and the operator alert are stored and read back as they were."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.readiness import ReadinessDegraded, ReadinessRestored
from bot.store.events import SYSTEM_STREAM


def test_readiness_episodes_and_a_degraded_alert_round_trip(store: EventStore) -> None:
    written = [
        ReadinessDegraded(state="llm_failing", detail="3 of the last 10 LLM calls failed"),
        AlertRaised(
            alert_id="a1", kind="degraded", summary="llm_failing for 15 minutes", rule="llm_failing"
        ),
        ReadinessRestored(state="llm_failing"),
    ]
    store.append(SYSTEM_STREAM, written)

    loaded = store.load(SYSTEM_STREAM)

    assert [e.data for e in loaded] == written
    assert [e.event_type for e in loaded] == [
        "readiness.degraded",
        "alert.raised",
        "readiness.restored",
    ]
    row = store.projection_row("alerts", "a1")
    assert row is not None and (row["kind"], row["rule"], row["participant_id"]) == (
        "degraded",
        "llm_failing",
        None,
    )
