"""Broadcast events round-trip through their stored form, and a replay rebuilds the broadcasts
and their recipients exactly as the appends left them (the plan's bulk path included)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import update

from bot.store.event_store import EventStore
from bot.store.event_types import ParticipantOptedOut
from bot.store.event_types.broadcasts import (
    BroadcastCancelled,
    BroadcastCreated,
    BroadcastDeferred,
    BroadcastHeld,
    BroadcastPlanned,
)
from bot.store.events import decode, encode, participant_stream
from bot.store.replay import compare, rebuild
from bot.store.schema import broadcast_recipients
from tests.services.broadcasting import create, enroll, settle

AT = datetime(2026, 12, 7, 17, 0, tzinfo=UTC)


def test_each_broadcast_event_round_trips_through_its_stored_form() -> None:
    for data in (
        BroadcastCreated(
            broadcast_id="b",
            created_by="cli:ana",
            message="Hi {{ participant.name }}",
            filter={"arm": "coach"},
            send_at={"mode": "local", "time": "09:00"},
            recipients=2,
        ),
        BroadcastPlanned(broadcast_id="b", participant_id="p", due_at=AT),
        BroadcastCancelled(broadcast_id="b", by="cli:ana", reason="wrong arm"),
        BroadcastHeld(broadcast_id="b", reason="opted out"),
        BroadcastDeferred(broadcast_id="b", until=AT, reason="quiet hours"),
    ):
        assert decode(data.event_type, 1, encode(data)) == data


def test_a_replay_rebuilds_broadcasts_and_recipients_and_sees_a_tampered_row(
    store: EventStore,
) -> None:
    enroll(store, 1)
    opted = enroll(store, 2)
    store.append(participant_stream(opted), [ParticipantOptedOut(source="operator")])
    enroll(store, 3)
    create(store, AT)
    settle(store, AT)
    report = rebuild(store)
    compare(store, report)
    assert report.clean, report.differences
    assert len(report.rebuilt["broadcast_recipients"]) == 3
    with store.engine.begin() as conn:
        conn.execute(update(broadcast_recipients).values(status="pending"))
    tampered = rebuild(store)
    compare(store, tampered)
    assert {d.kind for d in tampered.differences} == {"changed"}
