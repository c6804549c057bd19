"""The whole export of a small study, file by file, byte for byte: every file `export` writes,
its expected text built here from the events appended (with the csv and json modules), never
from the export's own code, so that a faster export cannot change what it writes unnoticed."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.clock import FakeClock
from bot.reporting.export import export
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived, MessageSent, MessageStatus
from bot.store.event_types.forms import FormFieldAdded, FormValueSet
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.messages import Media, MessageQueued
from bot.store.event_types.retrieval import RetrievalDone, RetrievedDocument
from bot.store.event_types.timers import MeasurementAsked, TimerScheduled
from bot.store.events import Event, EventData, NewEvent, participant_stream
from bot.store.personal import personal_fields
from tests.factories import enrolled

ANA = "00000000-0000-4000-8000-00000000000a"
BEN = "00000000-0000-4000-8000-00000000000b"
ENROLLED = datetime(2026, 10, 31, 12, 0, tzinfo=UTC)
# America/Toronto repeats 01:00-02:00 on 2026-11-01: 05:30 UTC is 01:30 EDT (-04:00), 06:30
# UTC is 01:30 EST (-05:00), the same wall time twice.
FIRST_0130 = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)
SECOND_0130 = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
REPLIED = datetime(2026, 11, 1, 6, 31, tzinfo=UTC)
DELIVERED = datetime(2026, 11, 1, 6, 32, 15, 250000, tzinfo=UTC)
ASKED = datetime(2026, 11, 2, 1, 0, tzinfo=UTC)  # 20:00 EST on 1 November
ANSWERED = datetime(2026, 11, 2, 1, 2, 30, tzinfo=UTC)


def _study(store: EventStore, clock: FakeClock) -> list[Event]:
    """Ana (Toronto) writes twice in the repeated hour, is answered, asked her mood, answers,
    and gets documents retrieved and a form field set; Ben (Kolkata) only enrolls."""
    ana = participant_stream(ANA)
    recorded: list[Event] = []

    def append(stream: str, at: datetime, *payloads: EventData) -> None:
        clock.set(at)
        recorded.extend(store.append(stream, [NewEvent(p, at) for p in payloads]).events)

    append(ana, ENROLLED, enrolled(participant_id=ANA, name='Ana, "A"', phone="+14165550101"))
    ben = enrolled(participant_id=BEN, phone="+919876543210", timezone="Asia/Kolkata")
    append(participant_stream(BEN), ENROLLED + timedelta(minutes=5), ben)
    sms = {"to_address": "+15005550006", "channel": "sms", "from_address": "+14165550101"}
    append(ana, FIRST_0130, MessageReceived(message_sid="SM1", body='fold, "one"', **sms))
    media = [Media(url="https://example.org/a.jpg", content_type="image/jpeg")]
    second = MessageReceived(message_sid="SM2", body="two\nlines", media=media, **sms)
    append(ana, SECOND_0130, second)
    to_ana = {"to_address": "+14165550101", "channel": "sms"}
    reply = MessageQueued(outbox_id="ob-1", body="Well done 🎉", **to_ana)
    append(ana, REPLIED, reply, MessageSent(outbox_id="ob-1", provider_sid="SMx", segments=1))
    append(ana, DELIVERED, MessageStatus(provider_sid="SMx", status="delivered", outbox_id="ob-1"))
    timer = TimerScheduled(timer_id="t-1", kind="measurement", due_at=ASKED)
    append(ana, ENROLLED + timedelta(hours=1), timer)
    ask = MessageQueued(outbox_id="ob-2", body="Mood 1-10?", kind="prompt", **to_ana)
    answer_by = ASKED + timedelta(hours=2)
    asked = MeasurementAsked(
        measurement="mood", timer_id="t-1", outbox_id="ob-2", answer_by=answer_by
    )
    append(ana, ASKED, ask, asked)
    append(ana, ANSWERED, MeasurementRecorded(measurement="mood", value=7, outbox_id="ob-2"))
    documents = [
        RetrievedDocument(id="d-1", title="Walking, gently", score=0.75, rank=1, digest="ab"),
        RetrievedDocument(id="d-2", title="Sleep", score=0.5, rank=2),
    ]
    search = {"name": "tips", "library": "habits", "method": "bm25", "k": 2}
    found = RetrievalDone(query="walk", documents=documents, step="explore", **search)
    append(ana, ANSWERED + timedelta(seconds=1), found, RetrievalDone(query="nothing", **search))
    field = FormFieldAdded(form="about", key="pets", type="list", description="their pets")
    value = FormValueSet(
        form="about", key="pets", value=["cat", "dog"], type="list", message_seq=3,
        message_id="m-3", step="explore",
    )  # fmt: skip
    append(ana, ANSWERED + timedelta(seconds=2), field, value)
    return recorded


def _csv(rows: list[list[Any]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue()


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as file:
        return file.read()


def _stored_order(value: Any, engine: str) -> Any:
    """A JSON value with its objects' keys in the order the engine keeps them: as written on
    SQLite (text), shorter keys first then by bytes on PostgreSQL (JSONB)."""
    if isinstance(value, list):
        return [_stored_order(v, engine) for v in value]
    if not isinstance(value, dict):
        return value
    keys = list(value)
    if engine == "postgresql":
        keys.sort(key=lambda k: (len(k.encode()), k.encode()))
    return {k: _stored_order(value[k], engine) for k in keys}


def _payload_text(ev: Event, engine: str) -> str:
    """An event's payload as the events file shows it: the stored plain fields, then the
    sealed personal ones (those with a value), by name, as they are opened."""
    payload = ev.data.model_dump(mode="json")
    sealed = sorted(n for n in personal_fields(type(ev.data)) if payload.get(n) is not None)
    plain = _stored_order({k: v for k, v in payload.items() if k not in sealed}, engine)
    opened = {**plain, **{n: payload[n] for n in sealed}}
    return json.dumps(opened, ensure_ascii=False, separators=(",", ":"))


@pytest.fixture
def engine(database_url: str) -> str:
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


def test_every_file_of_the_export_holds_exactly_what_the_events_say(
    store: EventStore, clock: FakeClock, tmp_path: Path, engine: str
) -> None:
    recorded = _study(store, clock)
    out = tmp_path / "out"
    export(store, out, "csv")

    assert sorted(p.name for p in out.iterdir()) == [
        "allocations.csv", "broadcasts.csv", "decisions.csv", "evaluations.csv", "events.csv",
        "forms.csv", "instruments.csv", "messages.csv",
        "participants.csv", "results.csv", "retrievals.csv",
    ]  # fmt: skip
    assert _read(out / "participants.csv") == _csv([
        ["participant_id", "phone_number", "channel", "status", "opted_out", "timezone",
         "intervention", "conversation_state", "current_step", "name", "gender", "ethnicity",
         "background", "debug", "enrolled_at_utc", "enrolled_at_local",
         "enrolled_at_local_naive", "last_inbound_at_utc", "last_inbound_at_local",
         "last_inbound_at_local_naive", "updated_at_utc", "version", "profile", "step_counters",
         "judgements", "notes", "withdrawn_at_utc", "withdrawn_at_local",
         "withdrawn_at_local_naive", "withdrawn_reason", "opted_out_at_utc",
         "opted_out_at_local", "opted_out_at_local_naive", "opted_out_reason", "erased_at_utc",
         "erased_at_local", "erased_at_local_naive", "erased_reason", "study", "arm",
         "allocated_at_utc", "allocated_at_local", "allocated_at_local_naive", "stratum"],
        [ANA, "+14165550101", "sms", "active", "false", "America/Toronto", "demo", "intake", "",
         'Ana, "A"', "", "", "", "false", "2026-10-31T12:00:00+00:00",
         "2026-10-31T08:00:00-04:00", "2026-10-31T08:00:00", "2026-11-01T06:30:00+00:00",
         "2026-11-01T01:30:00-05:00", "2026-11-01T01:30:00", "2026-11-02T01:02:32+00:00", "14",
         "{}", '{"asking":null,"measurements":{"mood":7}}', "{}", "{}", *[""] * 18],
        [BEN, "+919876543210", "sms", "active", "false", "Asia/Kolkata", "demo", "intake", "",
         "", "", "", "", "false", "2026-10-31T12:05:00+00:00", "2026-10-31T17:35:00+05:30",
         "2026-10-31T17:35:00", "", "", "", "2026-10-31T12:05:00+00:00", "1", "{}", "{}", "{}",
         "{}", *[""] * 18],
    ])  # fmt: skip
    assert _read(out / "allocations.csv") == _csv([
        ["participant_id", "study", "stage", "arm", "method", "sequence", "number", "stratum",
         "block", "block_size", "position", "timezone", "allocated_at_utc",
         "allocated_at_local", "allocated_at_local_naive"],
    ])  # fmt: skip
    assert _read(out / "messages.csv") == _csv([
        ["participant_id", "seq", "message_id", "direction", "channel", "kind", "keyword", "text",
         "media", "status", "error_code", "error_message", "segments", "provider_sid",
         "timezone", "created_at_utc", "created_at_local", "created_at_local_naive",
         "sent_at_utc", "sent_at_local", "sent_at_local_naive", "status_at_utc"],
        [ANA, "3", "SM1", "inbound", "sms", "message", "", 'fold, "one"', "[]", "received", "",
         "", "1", "SM1", "America/Toronto", "2026-11-01T05:30:00+00:00",
         "2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00", "", "", "",
         "2026-11-01T05:30:00+00:00"],
        [ANA, "4", "SM2", "inbound", "sms", "message", "", "two\nlines",
         '["https://example.org/a.jpg"]', "received", "", "", "1", "SM2", "America/Toronto",
         "2026-11-01T06:30:00+00:00", "2026-11-01T01:30:00-05:00", "2026-11-01T01:30:00", "",
         "", "", "2026-11-01T06:30:00+00:00"],
        [ANA, "5", "ob-1", "outbound", "sms", "reply", "", "Well done 🎉", "[]", "delivered", "",
         "", "1", "SMx", "America/Toronto", "2026-11-01T06:31:00+00:00",
         "2026-11-01T01:31:00-05:00", "2026-11-01T01:31:00", "2026-11-01T06:31:00+00:00",
         "2026-11-01T01:31:00-05:00", "2026-11-01T01:31:00", "2026-11-01T06:32:15.250000+00:00"],
        [ANA, "9", "ob-2", "outbound", "sms", "prompt", "", "Mood 1-10?", "[]", "pending", "",
         "", "1", "", "America/Toronto", "2026-11-02T01:00:00+00:00",
         "2026-11-01T20:00:00-05:00", "2026-11-01T20:00:00", "", "", "",
         "2026-11-02T01:00:00+00:00"],
    ])  # fmt: skip
    assert _read(out / "results.csv") == _csv([
        ["participant_id", "intervention", "question", "timezone", "scheduled_utc",
         "scheduled_local", "scheduled_local_naive", "asked_utc", "asked_local",
         "asked_local_naive", "answered_utc", "answered_local", "answered_local_naive", "value",
         "value_code", "value_label", "method", "latency_seconds", "attempts", "status"],
        [ANA, "demo", "mood", "America/Toronto", "2026-11-02T01:00:00+00:00",
         "2026-11-01T20:00:00-05:00", "2026-11-01T20:00:00", "2026-11-02T01:00:00+00:00",
         "2026-11-01T20:00:00-05:00", "2026-11-01T20:00:00", "2026-11-02T01:02:30+00:00",
         "2026-11-01T20:02:30-05:00", "2026-11-01T20:02:30", "7", "7", "", "parsed", "150.0",
         "0", "answered"],
    ])  # fmt: skip
    assert _read(out / "retrievals.csv") == _csv([
        ["participant_id", "at_utc", "name", "library", "query", "method", "model", "step",
         "when", "rank", "doc_id", "title", "score", "digest"],
        [ANA, "2026-11-02T01:02:31+00:00", "tips", "habits", "walk", "bm25", "", "explore",
         "turn", "1", "d-1", "Walking, gently", "0.75", "ab"],
        [ANA, "2026-11-02T01:02:31+00:00", "tips", "habits", "walk", "bm25", "", "explore",
         "turn", "2", "d-2", "Sleep", "0.5", ""],
        [ANA, "2026-11-02T01:02:31+00:00", "tips", "habits", "nothing", "bm25", "", "", "turn",
         "", "", "", "", ""],
    ])  # fmt: skip
    assert _read(out / "forms.csv") == _csv([
        ["participant_id", "intervention", "form", "field", "value", "type", "domain",
         "critical", "added", "set_at_utc", "set_at_local", "set_at_local_naive", "message_seq",
         "message_id", "step", "times_set"],
        [ANA, "demo", "about", "pets", '["cat","dog"]', "list", "", "false", "true",
         "2026-11-02T01:02:32+00:00", "2026-11-01T20:02:32-05:00", "2026-11-01T20:02:32", "3",
         "m-3", "explore", "1"],
    ])  # fmt: skip
    header = ["seq", "event_id", "stream_id", "stream_version", "type", "schema_version",
              "occurred_at", "recorded_at", "idempotency_key", "data", "meta"]  # fmt: skip
    rows = [
        [ev.seq, ev.event_id, ev.stream_id, ev.stream_version, ev.event_type, 1,
         ev.occurred_at.isoformat(), ev.recorded_at.isoformat(), "", _payload_text(ev, engine),
         "{}"]
        for ev in recorded
    ]  # fmt: skip
    assert [row[0] for row in rows] == list(range(1, 16))
    assert _read(out / "events.csv") == _csv([header, *rows])
