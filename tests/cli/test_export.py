"""`tandem export`: participants, messages and events as CSV or JSON Lines, for analysis."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from bot.channel import outbound
from bot.core.clock import FakeClock
from bot.reporting.export import export, parse_since, participant_records
from bot.reporting.transcript import read_lines
from bot.store.event_store import EventStore
from bot.store.event_types import MessageFailed, MessageSent, MessageStatus
from bot.store.events import participant_stream
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled, received
from tests.store.statements import executed

ROOT = Path(__file__).resolve().parents[2]
JANUARY = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
JULY = datetime(2026, 7, 6, 12, 0, tzinfo=UTC)


def study(store: EventStore, clock: FakeClock) -> dict[str, str]:
    """Toronto writes in January and July (EST, then EDT); Kolkata (+05:30) gets a failed send."""
    toronto = enrolled(phone="+14155552671", timezone="America/Toronto", name="Ana")
    kolkata = enrolled(phone="+919876543210", timezone="Asia/Kolkata")
    clock.set(JANUARY - timedelta(hours=1))
    store.append(participant_stream(toronto.participant_id), [toronto])
    clock.set(JANUARY - timedelta(minutes=30))
    store.append(participant_stream(kolkata.participant_id), [kolkata])
    clock.set(JANUARY)
    store.append(participant_stream(toronto.participant_id), [received("SM1", "winter hello")])
    row = {"channel": "sms", "phone": kolkata.phone}
    (prompt,) = outbound.to_participant(row, "Walk 5 minutes?", kind="prompt")
    store.append(
        participant_stream(kolkata.participant_id),
        [prompt, MessageFailed(outbox_id=prompt.outbox_id, error_code=30007, error_message="no")],
    )
    clock.set(JULY)
    store.append(participant_stream(toronto.participant_id), [received("SM2", "summer hello")])
    reply_row = {"channel": "sms", "phone": toronto.phone}
    (reply,) = outbound.to_participant(reply_row, "Hi Ana, well done 🎉")
    store.append(
        participant_stream(toronto.participant_id),
        [
            reply,
            MessageSent(outbox_id=reply.outbox_id, provider_sid="SMx", segments=1),
            MessageStatus(provider_sid="SMx", status="delivered", outbox_id=reply.outbox_id),
        ],
    )
    return {"toronto": toronto.participant_id, "kolkata": kolkata.participant_id}


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_csv_export_writes_participants_messages_and_events(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = study(store, clock)
    counts = export(store, tmp_path / "out", "csv")
    assert (counts.participants, counts.messages, counts.events) == (2, 4, 9)
    people = read_csv(tmp_path / "out" / "participants.csv")
    assert [(p["participant_id"], p["phone_number"], p["timezone"]) for p in people] == [
        (ids["toronto"], "+14155552671", "America/Toronto"),
        (ids["kolkata"], "+919876543210", "Asia/Kolkata"),
    ]
    assert people[0]["enrolled_at_local"] == "2026-01-05T06:00:00-05:00"
    assert people[1]["enrolled_at_local"] == "2026-01-05T17:00:00+05:30"
    events = read_csv(tmp_path / "out" / "events.csv")
    assert [int(e["seq"]) for e in events] == list(range(1, 10))
    assert json.loads(events[0]["data"])["name"] == "Ana"
    assert sorted(os.listdir(tmp_path / "out")) == [
        "allocations.csv",
        "broadcasts.csv",
        "decisions.csv",
        "evaluations.csv",
        "events.csv",
        "forms.csv",
        "instruments.csv",
        "messages.csv",
        "participants.csv",
        "results.csv",
        "retrievals.csv",
    ]


def test_message_times_are_given_in_utc_and_in_each_participants_local_time(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    export(store, tmp_path, "csv")
    rows = read_csv(tmp_path / "messages.csv")
    local = [(m["text"], m["created_at_utc"], m["created_at_local"]) for m in rows]
    assert local == [
        ("winter hello", "2026-01-05T12:00:00+00:00", "2026-01-05T07:00:00-05:00"),
        ("summer hello", "2026-07-06T12:00:00+00:00", "2026-07-06T08:00:00-04:00"),
        ("Hi Ana, well done 🎉", "2026-07-06T12:00:00+00:00", "2026-07-06T08:00:00-04:00"),
        ("Walk 5 minutes?", "2026-01-05T12:00:00+00:00", "2026-01-05T17:30:00+05:30"),
    ]


def test_messages_carry_direction_status_error_code_and_segments(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    export(store, tmp_path, "csv")
    rows = read_csv(tmp_path / "messages.csv")
    summary = [
        (m["direction"], m["kind"], m["status"], m["error_code"], m["segments"]) for m in rows
    ]
    assert summary == [
        ("inbound", "message", "received", "", "1"),
        ("inbound", "message", "received", "", "1"),
        ("outbound", "reply", "delivered", "", "1"),
        ("outbound", "prompt", "failed", "30007", "1"),
    ]
    assert rows[2]["sent_at_local"] == "2026-07-06T08:00:00-04:00"


def test_jsonl_export_writes_one_object_per_line_with_native_values(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = study(store, clock)
    export(store, tmp_path, "jsonl")
    people = read_jsonl(tmp_path / "participants.jsonl")
    assert people[0]["debug"] is False
    assert people[0]["profile"] == {}
    messages = read_jsonl(tmp_path / "messages.jsonl")
    assert messages[3]["error_code"] == 30007
    assert messages[3]["participant_id"] == ids["kolkata"]
    assert messages[0]["media"] == []
    events = read_jsonl(tmp_path / "events.jsonl")
    assert events[0]["type"] == "participant.enrolled"
    assert events[0]["data"]["timezone"] == "America/Toronto"
    assert not list(tmp_path.glob("*.csv"))


def test_since_limits_messages_and_events_but_keeps_every_participant(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    counts = export(store, tmp_path, "jsonl", since=datetime(2026, 7, 1, tzinfo=UTC))
    assert counts.participants == 2
    texts = [m["text"] for m in read_jsonl(tmp_path / "messages.jsonl")]
    assert texts == ["summer hello", "Hi Ana, well done 🎉"]
    assert {e["occurred_at"][:7] for e in read_jsonl(tmp_path / "events.jsonl")} == {"2026-07"}


def test_participant_limits_every_file_to_that_participant(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    ids = study(store, clock)
    counts = export(store, tmp_path, "csv", participant_ids=[ids["kolkata"]])
    assert (counts.participants, counts.messages, counts.events) == (1, 1, 3)
    streams = {e["stream_id"] for e in read_csv(tmp_path / "events.csv")}
    assert streams == {participant_stream(ids["kolkata"])}


def test_progress_is_reported_per_file_with_its_total(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    study(store, clock)
    seen: dict[str, list[int]] = {}

    def progress(name: str, total: int | None) -> Any:
        seen[name] = [total or 0, 0]

        def advance(rows: int) -> None:
            seen[name][1] += rows

        return advance

    export(store, tmp_path, "csv", progress=progress)
    assert seen == {
        "participants": [2, 2],
        "messages": [4, 4],
        "results": [0, 0],
        "retrievals": [0, 0],
        "forms": [0, 0],
        "decisions": [0, 0],
        "instruments": [0, 0],
        "evaluations": [0, 0],
        "events": [9, 9],
    }


def test_the_transcript_is_read_in_batches(store: EventStore, clock: FakeClock) -> None:
    ids = study(store, clock)
    whole = list(read_lines(store, ids["toronto"]))
    assert [line.text for line in read_lines(store, ids["toronto"], batch=1)] == [
        line.text for line in whole
    ]
    assert len(whole) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-31", datetime(2026, 1, 31, tzinfo=UTC)),
        ("2026-01-31T08:30", datetime(2026, 1, 31, 8, 30, tzinfo=UTC)),
        ("2026-01-31T08:30:00+02:00", datetime(2026, 1, 31, 6, 30, tzinfo=UTC)),
        ("2026-01-31T08:30:00Z", datetime(2026, 1, 31, 8, 30, tzinfo=timezone(timedelta(0)))),
    ],
)
def test_since_reads_an_iso_date_or_datetime_as_utc(text: str, expected: datetime) -> None:
    assert parse_since(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "31/01/2026", ""])
def test_since_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match="ISO date"):
        parse_since(text)


def tandem(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", *args],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_writes_the_files_and_prints_a_summary(
    store: EventStore, clock: FakeClock, database_url: str, tmp_path: Path
) -> None:
    study(store, clock)
    result = tandem("export", "--out", str(tmp_path / "x"), "--format", "jsonl", url=database_url)
    assert result.returncode == 0, result.stderr
    assert (
        "exported 2 participants, 4 messages, 0 results, 0 retrievals, 0 form values and 9 "
        "events, "
        "with a codebook" in result.stdout
    )
    assert sorted(p.name for p in (tmp_path / "x").glob("codebook.*")) == [
        "codebook.json",
        "codebook.md",
    ]
    assert len(read_jsonl(tmp_path / "x" / "messages.jsonl")) == 4


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["--since", "last week"], "ISO date"),
        (["--participant", "nope"], "not a participant id"),
        (["--participant", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"], "no participant"),
        (["--format", "xlsx"], "xlsx"),
    ],
)
def test_the_command_refuses_bad_options_clearly(
    database_url: str, tmp_path: Path, args: list[str], complaint: str
) -> None:
    result = tandem("export", "--out", str(tmp_path), *args, url=database_url)
    assert result.returncode == 2
    assert complaint in result.stderr
    assert "Traceback" not in result.stderr


def test_an_export_reads_the_events_in_a_query_per_batch_of_participants_not_per_participant(
    store: EventStore, tmp_path: Path
) -> None:
    """Linear in participants: the per-participant files (messages, results, retrievals,
    forms) come from one events query per batch of participants, whatever their number."""
    for n in range(30):
        person = enrolled(phone=f"+1416555{n:04d}")
        store.append(
            participant_stream(person.participant_id),
            [person, received(f"SM{n}", body=f"hello {n}", phone=person.phone)],
        )
    issued: list[str] = []
    parameters: dict[str, Any] = {}

    def record(_conn: Any, _cursor: Any, statement: str, params: Any, *_rest: Any) -> None:
        if statement.startswith("SELECT") and "FROM events" in statement:
            issued.append(statement)
            parameters[statement] = params

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        counts = export(store, tmp_path / "out")
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert counts.messages == 30 and counts.participants == 30
    per_stream = [s for s in issued if "events.stream_id IN" in s]
    # 30 participants fit in one batch: one read of their events for the four files.
    assert len(per_stream) == 1, per_stream
    # + the last seq, the counts, the raw events file, and one read of every participant's
    # lifecycle and allocation events (participants.csv and allocations.csv)
    assert len(issued) <= 7, issued
    if store.engine.dialect.name == "sqlite":  # and it walks the streams' index (linear)
        with store.engine.connect() as conn:
            (sql,) = per_stream
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", parameters[sql])
            plan = " | ".join(row[3] for row in rows)
        assert "(stream_id=? AND stream_version>?)" in plan, plan
        assert "ix_events_event_type_seq" not in plan, plan


def test_the_participants_are_read_in_one_sorted_query_however_many_batches_they_fill(
    store: EventStore, clock: FakeClock
) -> None:
    """Linear in participants: no index holds the enrollment order, so a query per batch
    (paging past the last row) sorted every participant for every batch."""
    enrolled_order = []
    for n in range(30):
        clock.set(JANUARY - timedelta(minutes=n % 7))  # enrollment order is not id order
        person = enrolled(phone=f"+1416555{n:04d}")
        store.append(
            participant_stream(person.participant_id),
            [person, received(f"SM{n}", body=f"hello {n}", phone=person.phone)],
        )
        enrolled_order.append((clock.now(), person.participant_id))
    issued: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.startswith("SELECT") and "FROM participants" in statement:
            issued.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        with store.snapshot() as conn:
            records = list(
                participant_records(conn, store.sealer, ("messages",), (), 10**9, None, batch=7)
            )
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert [r["participant_id"] for _name, r in records] == [p for _at, p in sorted(enrolled_order)]
    assert len(issued) == 1, issued


def test_each_message_takes_its_own_outbox_row_from_its_batchs_query_through_the_index(
    store: EventStore, clock: FakeClock
) -> None:
    """The outbox rows (a message's status, provider id and sent time) of each batch of
    participants are read in one query of the batch's streams, through the outbox's stream
    index: as much work for each batch whatever the export's size (one query of every row,
    sorted as the participants are, scanned the whole outbox, and did so again for each chunk
    of an export in parts)."""
    expected = {}
    for n in range(30):
        clock.set(JANUARY - timedelta(minutes=n % 7))  # enrollment order is not id order
        person = enrolled(phone=f"+1416555{n:04d}")
        stream = participant_stream(person.participant_id)
        (prompt,) = outbound.to_participant({"channel": "sms", "phone": person.phone}, f"Hi {n}")
        store.append(stream, [person, prompt])
        if n % 3:  # every third participant's message is still pending, and has none
            store.append(stream, [MessageSent(outbox_id=prompt.outbox_id, provider_sid=f"SM{n}")])
        expected[prompt.outbox_id] = ("sent", f"SM{n}") if n % 3 else ("pending", None)
    with executed(store.engine) as seen, store.snapshot() as conn:
        records = participant_records(conn, store.sealer, ("messages",), (), 10**9, None, batch=7)
        got = {r["message_id"]: (r["status"], r["provider_sid"]) for _name, r in records}
    issued = [
        (sql, params) for sql, params in seen if sql.startswith("SELECT") and "FROM outbox" in sql
    ]
    assert got == expected
    assert len(issued) == 5, issued  # one for each batch of 7 of the 30
    assert all("outbox.stream_id IN" in sql for sql, _params in issued), issued
    sql, params = issued[0]
    with store.engine.begin() as conn:  # through the stream index, not a scan
        if store.engine.dialect.name == "sqlite":
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = " | ".join(row[3] for row in rows)
            assert "USING INDEX ix_outbox_stream_id_position (stream_id=?)" in plan, plan
        else:  # as the server-side cursor it is read through plans it (a plain read scanned)
            rows = conn.exec_driver_sql(f"EXPLAIN DECLARE c NO SCROLL CURSOR FOR {sql}", params)
            plan = " | ".join(row[0] for row in rows)
            assert "Index Scan using ix_outbox_stream_id_position" in plan, plan
            assert "Sort" not in plan, plan


def test_every_file_describes_the_moment_the_export_began(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    """All the files are read in one snapshot: a delivery report, a new participant and a
    message recorded while the export is writing its first file are in none of them (a
    delivery report read afterwards showed a message `sent` whose `message.sent` event was not
    in events.csv)."""
    ana = enrolled(phone="+14155552671")
    stream = participant_stream(ana.participant_id)
    (prompt,) = outbound.to_participant({"channel": "sms", "phone": ana.phone}, "Walk today?")
    store.append(stream, [ana, prompt])
    late = enrolled(phone="+14155550199")

    def record_meanwhile() -> None:
        store.append(stream, [MessageSent(outbox_id=prompt.outbox_id, provider_sid="SMp")])
        store.append(stream, [received("SM9", "done!")])
        store.append(participant_stream(late.participant_id), [late])

    def progress(name: str, _total: int | None):  # noqa: ANN202
        def step(_rows: int) -> None:
            if name == "participants" and not recorded:
                recorded.append(name)
                record_meanwhile()

        return step

    recorded: list[str] = []
    counts = export(store, tmp_path / "out", "csv", progress=progress)
    assert recorded  # the writes happened while the export ran
    assert counts.events == 2
    people = read_csv(tmp_path / "out" / "participants.csv")
    assert [p["participant_id"] for p in people] == [ana.participant_id]
    messages = read_csv(tmp_path / "out" / "messages.csv")
    assert [(m["message_id"], m["status"], m["sent_at_utc"]) for m in messages] == [
        (prompt.outbox_id, "pending", "")
    ]
    events = read_csv(tmp_path / "out" / "events.csv")
    assert [e["type"] for e in events] == ["participant.enrolled", "message.queued"]
    # and the next export sees them all
    export(store, tmp_path / "after", "csv")
    after = read_csv(tmp_path / "after" / "messages.csv")
    assert sorted(m["status"] for m in after) == ["received", "sent"]
    assert len(read_csv(tmp_path / "after" / "participants.csv")) == 2
