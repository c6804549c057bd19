"""Broadcasts: who a filter reaches, a dry run that records nothing, and each recipient sent
once or held with the reason (opted out, withdrawn, quiet hours, takeover, WhatsApp window)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.clock import FakeClock
from bot.core.localtime import parse_quiet_hours
from bot.services import broadcasts
from bot.services.broadcast_sending import QuietRules
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived, ParticipantOptedOut
from bot.store.event_types.participants import ParticipantWithdrawn
from bot.store.event_types.takeover import TakeoverStarted
from bot.store.events import participant_stream
from tests.services.broadcasting import CATALOGUE, create, enroll, profile, settle

NOON = datetime(2026, 12, 7, 17, 0, tzinfo=UTC)  # 12:00 in Toronto
TEMPLATE = "HX" + "ab" * 16


def outbox_rows(store: EventStore, pid: str) -> list[dict]:
    return [
        e.data.model_dump()
        for e in store.load(participant_stream(pid))
        if e.event_type == "message.queued"
    ]


def test_a_dry_run_counts_and_renders_three_samples_and_records_nothing(store: EventStore) -> None:
    for n in range(5):
        enroll(store, n, name=f"P{n}")
    planned = broadcasts.create(
        store,
        CATALOGUE,
        {"message": "Hi {{ participant.name }}!"},
        actor="test",
        now=NOON,
        dry_run=True,
    )
    assert planned.broadcast_id is None and planned.recipients == 5
    texts = {s["text"] for s in planned.samples}
    assert len(texts) == 3 and texts <= {f"Hi P{n}!" for n in range(5)}
    assert broadcasts.listing(store) == []


def test_the_profile_condition_is_typed_and_filters(store: EventStore) -> None:
    keen = enroll(store, 1, profile(intensity="high"))
    enroll(store, 2, profile(intensity="low"))
    planned = create(store, NOON, filter={"condition": "profile.intensity == 'high'"})
    assert planned.recipients == 1
    assert broadcasts.recipients(store, str(planned.broadcast_id))[0]["participant_id"] == keen
    with pytest.raises(Refused, match="unknown name"):
        create(store, NOON, filter={"condition": "profile.shoe_size > 3"})
    with pytest.raises(Refused, match="filter.condition"):
        create(store, NOON, filter={"condition": "profile.intensity >"})


def test_each_recipient_is_queued_once_tagged_with_the_broadcast(store: EventStore) -> None:
    pids = [enroll(store, n) for n in range(3)]
    planned = create(store, NOON)
    assert settle(store, NOON) == ["queued"] * 3
    assert settle(store, NOON) == []  # nothing is due twice
    for pid in pids:
        [queued] = outbox_rows(store, pid)
        assert queued["kind"] == "broadcast" and queued["broadcast_id"] == planned.broadcast_id
    progress = broadcasts.show(store, str(planned.broadcast_id))["progress"]
    assert progress == {"sent": 0, "held": 0, "failed": 0, "pending": 3}


def test_opted_out_withdrawn_and_taken_over_participants_are_held_with_the_reason(
    store: EventStore,
) -> None:
    opted = enroll(store, 1)
    withdrawn = enroll(store, 2)
    held = enroll(store, 3)
    reached = enroll(store, 4)
    planned = create(store, NOON)
    store.append(participant_stream(opted), [ParticipantOptedOut(source="keyword", keyword="STOP")])
    store.append(
        participant_stream(withdrawn),
        [ParticipantWithdrawn(reason="moved away", requested_by="participant")],
    )
    store.append(participant_stream(held), [TakeoverStarted(by="staff:a@example.org")])
    settle(store, NOON)
    reasons = {
        r["participant_id"]: (r["state"], r["reason"])
        for r in broadcasts.recipients(store, str(planned.broadcast_id))
    }
    assert reasons[opted] == ("held", "opted out")
    assert reasons[withdrawn] == ("held", "participant withdrawn")
    assert reasons[held] == ("held", "conversation taken over by staff")
    assert reasons[reached] == ("pending", None)
    assert [outbox_rows(store, p) for p in (opted, withdrawn, held)] == [[], [], []]
    assert len(outbox_rows(store, reached)) == 1


def test_quiet_hours_defer_to_their_end_in_the_participants_own_zone(store: EventStore) -> None:
    pid = enroll(store, 1)  # America/Toronto
    night = datetime(2026, 12, 8, 3, 0, tzinfo=UTC)  # 22:00 in Toronto
    create(store, night)
    quiet = QuietRules(parse_quiet_hours("21:00-08:00"))
    assert settle(store, night, quiet) == ["deferred"]
    assert settle(store, night + timedelta(hours=2), quiet) == []  # not due yet
    morning = datetime(2026, 12, 8, 13, 0, tzinfo=UTC)  # 08:00 in Toronto
    assert settle(store, morning, quiet) == ["queued"]
    assert len(outbox_rows(store, pid)) == 1


def test_whatsapp_outside_the_window_needs_a_template_or_is_held(store: EventStore) -> None:
    silent = enroll(store, 1, channel="whatsapp")
    recent = enroll(store, 2, channel="whatsapp")
    store.append(
        participant_stream(recent),
        [
            MessageReceived(
                message_sid="SM1",
                from_address="whatsapp:+14155550002",
                to_address="whatsapp:+15005550006",
                channel="whatsapp",
                body="hi",
            )
        ],
    )
    now = FakeClock().now() + timedelta(hours=1)
    plain = create(store, now)
    settle(store, now)
    states = {r["participant_id"]: r for r in broadcasts.recipients(store, str(plain.broadcast_id))}
    assert states[silent]["state"] == "held"
    assert "WhatsApp 24-hour window" in states[silent]["reason"]
    assert states[recent]["state"] == "pending"  # queued: inside the window
    templated = create(store, now, whatsapp_template=TEMPLATE)
    settle(store, now)
    [with_template] = outbox_rows(store, silent)
    assert with_template["content_sid"] == TEMPLATE
    assert with_template["broadcast_id"] == templated.broadcast_id


def test_a_cancelled_broadcast_sends_nothing_more(store: EventStore) -> None:
    pid = enroll(store, 1)
    planned = create(store, NOON, send_at={"mode": "local", "time": "18:00"})
    shown = broadcasts.cancel(store, str(planned.broadcast_id), actor="test")
    assert shown["status"] == "cancelled" and shown["progress"]["cancelled"] == 1
    assert settle(store, NOON + timedelta(days=1)) == []
    assert outbox_rows(store, pid) == []
    with pytest.raises(Refused, match="cancelled already"):
        broadcasts.cancel(store, str(planned.broadcast_id), actor="test")


def test_a_local_send_time_is_due_in_each_participants_own_zone(store: EventStore) -> None:
    toronto = enroll(store, 1)
    tokyo = enroll(store, 2, timezone="Asia/Tokyo")
    create(store, NOON, send_at={"mode": "local", "time": "18:00"})
    due = {d["participant_id"]: d["due_at"] for d in settle_due(store)}
    assert due[toronto] == datetime(2026, 12, 7, 23, 0, tzinfo=UTC)
    assert due[tokyo] == datetime(2026, 12, 8, 9, 0, tzinfo=UTC)


def settle_due(store: EventStore) -> list[dict]:
    from bot.store.reads.broadcasts import due_recipients

    return due_recipients(store, NOON + timedelta(days=2), 100)
