"""broadcasts.csv: one row per recipient of each broadcast, with what became of their message
(sent with its time, or held with the reason), and the codebook describes it."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

from bot.reporting.codebook import FILES
from bot.reporting.export import export
from bot.store.event_store import EventStore
from bot.store.event_types import MessageSent, ParticipantOptedOut
from bot.store.events import participant_stream
from tests.services.broadcasting import create, enroll, settle

NOON = datetime(2026, 12, 7, 17, 0, tzinfo=UTC)


def test_each_recipient_is_a_row_with_status_reason_and_sent_time(
    store: EventStore, tmp_path: Path
) -> None:
    reached = enroll(store, 1)
    opted = enroll(store, 2)
    planned = create(store, NOON)
    store.append(participant_stream(opted), [ParticipantOptedOut(source="keyword", keyword="STOP")])
    settle(store, NOON)
    [queued] = [
        e.data for e in store.load(participant_stream(reached)) if e.event_type == "message.queued"
    ]
    store.append(
        participant_stream(reached),
        [MessageSent(outbox_id=queued.outbox_id, provider_sid="SM" + "1" * 32)],  # type: ignore[attr-defined]
    )
    export(store, tmp_path, "csv")
    with (tmp_path / "broadcasts.csv").open(newline="") as f:
        rows = {r["participant_id"]: r for r in csv.DictReader(f)}
    assert set(rows) == {reached, opted}
    assert rows[reached]["broadcast_id"] == planned.broadcast_id
    assert rows[reached]["status"] == "sent" and rows[reached]["sent_at_utc"]
    assert rows[reached]["message_id"] == queued.outbox_id  # type: ignore[attr-defined]
    assert (rows[opted]["status"], rows[opted]["reason"]) == ("held", "opted out")
    assert rows[opted]["sent_at_utc"] == ""
    assert [c.name for c in FILES["broadcasts.csv"]] == list(next(iter(rows.values())))
