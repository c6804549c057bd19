"""messages.csv's records read from stored payloads are exactly those the typed path (each
event decoded into its model, then a transcript line) makes, sealed, escaped and erased data,
and payloads the plain reading must refuse, included; and its rows made straight from the
payloads (`message_lines`) are exactly what `csv_line` writes for those records."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.core.clock import FakeClock
from bot.keys import erasure
from bot.reporting.cells import NEEDS_QUOTES, csv_line
from bot.reporting.export import _histories, _outbox_rows
from bot.reporting.messages import (
    MESSAGE_COLUMNS,
    MESSAGE_TYPES,
    message_lines,
    message_record,
    message_records,
    plain_payload,
)
from bot.reporting.transcript import LINE_TYPES, build
from bot.store.event_store import EventStore
from bot.store.event_types.messages import (
    Media,
    MessageKind,
    MessageQueued,
    MessageReceived,
    MessageSent,
)
from bot.store.event_types.participants import Channel, ParticipantErased
from bot.store.events import Event, NewEvent, participant_of, participant_stream
from bot.store.jobs import last_seq
from bot.store.scan import StoredEvent
from bot.store.stored_rows import row_to_event
from tests.factories import enrolled, received

PHONE = "+14155552671"
PARTICIPANT = {"participant_id": "p", "timezone": "Asia/Kolkata"}


def _typed(events: list[Event], outbox: dict, since: datetime | None) -> list[dict]:
    """The records as the export made them before it read payloads plainly."""
    kept = [
        e
        for e in events
        if e.event_type == MessageSent.event_type
        or (e.event_type in LINE_TYPES and (since is None or e.occurred_at >= since))
    ]
    return [message_record(line, PARTICIPANT["timezone"]) for line in build(kept, outbox)]


def _conversation(store: EventStore, clock: FakeClock) -> str:
    person = enrolled(PHONE)
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    photo = Media(url="https://example.org/m/1.jpg", content_type="image/jpeg")
    queued = [
        MessageQueued(outbox_id=f"o{n}", to_address=PHONE, channel="sms", body=body, kind=kind)
        for n, (body, kind) in enumerate(
            [('Well done, "Ada"!', "reply"), (None, "prompt"), ("é" * 90, "reminder")]
        )
    ]
    store.append(
        stream,
        [
            received("SM1", "walked, then \"ran\"\nhome"),
            MessageReceived(
                message_sid="SM2", from_address=PHONE, to_address="+15005550006",
                channel="whatsapp", body="", media=[photo],
            ),
            received("SM3", "nul\x00inside"),  # escaped: NUL is kept aside
            *queued,
            MessageQueued(
                outbox_id="alert", to_address="+15550001111", channel="sms", body="x",
                kind="alert", to_participant=False,
            ),
            MessageSent(outbox_id="o0", provider_sid="SMo0", segments=3),
            MessageSent(outbox_id="o2", provider_sid="SMo2"),
        ],
    )  # fmt: skip
    clock.advance(timedelta(hours=2))
    stop = MessageReceived(
        message_sid="SM4", from_address=PHONE, to_address="+1500", channel="sms", body="STOP",
        keyword="STOP",
    )  # fmt: skip
    store.append(stream, [NewEvent(stop, clock.now())])
    return stream


def _both(store: EventStore, stream: str, since: datetime | None) -> tuple[list, list, list]:
    with store.snapshot() as conn:
        upto = last_seq(conn)
        rows = _histories(conn, store.sealer, [stream], sorted(MESSAGE_TYPES), upto)[stream]
        pid = participant_of(stream)
        assert pid is not None
        outbox = _outbox_rows(conn, [stream])
    plain = message_records(rows, outbox, PARTICIPANT, since, row_to_event)
    typed = _typed([row_to_event(r) for r in rows], outbox, since)
    assert message_lines(rows, outbox, PARTICIPANT, since, row_to_event) == _lines(plain)
    return plain, typed, rows


def _lines(records: list[dict[str, Any]]) -> list[str]:
    """messages.csv's rows of `records`, as the export writes a record."""
    return [csv_line(map(record.get, MESSAGE_COLUMNS)) for record in records]


def test_plain_records_are_the_typed_ones(store: EventStore, clock: FakeClock) -> None:
    stream = _conversation(store, clock)

    plain, typed, rows = _both(store, stream, None)

    assert plain == typed
    assert len(plain) == 7  # not the alert
    assert all(plain_payload(r) is not None for r in rows)  # the fast path was taken


def test_since_keeps_the_same_messages_both_ways(store: EventStore, clock: FakeClock) -> None:
    stream = _conversation(store, clock)

    plain, typed, _rows = _both(store, stream, clock.now() - timedelta(minutes=1))

    assert plain == typed
    assert [r["message_id"] for r in plain] == ["SM4"]


def test_erased_messages_are_decoded_and_read_as_erased(
    store: EventStore, clock: FakeClock
) -> None:
    stream = _conversation(store, clock)
    with store.transaction() as tx:  # a key is destroyed only with its erasure recorded
        erased = ParticipantErased(reason="asked", requested_by="participant")
        tx.append(stream, [NewEvent(erased)], tx.version(stream))
        erasure.shred(tx, stream.removeprefix("participant:"), clock.now())

    plain, typed, rows = _both(store, stream, None)

    assert plain == typed
    assert {r["text"] for r in plain if r["direction"] == "inbound"} == {"[erased]"}
    assert all(plain_payload(r) is None for r in rows if r.event_type == "message.received")


def _row(data: dict, schema_version: int = 1, meta: dict | None = None) -> StoredEvent:
    at = datetime(2026, 1, 31, tzinfo=UTC)
    kind = "message.received"
    return StoredEvent(7, "e-1", "participant:p", 2, kind, schema_version, data, meta or {},
                       None, at, at)  # fmt: skip


def test_payloads_the_model_would_change_or_refuse_are_not_read_plainly() -> None:
    stored = received("SM1", "hi").model_dump(mode="json")
    missing = {k: v for k, v in stored.items() if k != "keyword"}  # the model's default fills it
    assert plain_payload(_row(stored)) == stored
    for refused in (
        _row(stored, schema_version=0),  # an older version: its upcaster must run
        _row(stored, meta={"erased": ["body"]}),
        _row(missing),
        _row({**stored, "extra": 1}),
        _row({**stored, "body": 5}),
        _row({**stored, "keyword": "MAYBE"}),
        _row({**stored, "channel": "fax"}),
        _row({**stored, "media": [{"url": "u"}]}),
    ):
        assert plain_payload(refused) is None, refused


def test_a_payload_missing_a_defaulted_field_gets_the_models_default() -> None:
    stored = received("SM1", "hi").model_dump(mode="json")
    row = _row({k: v for k, v in stored.items() if k != "keyword"})

    plain = message_records([row], {}, PARTICIPANT, None, row_to_event)

    assert plain == _typed([row_to_event(row)], {}, None)
    assert plain[0]["keyword"] is None
    assert message_lines([row], {}, PARTICIPANT, None, row_to_event) == _lines(plain)


def test_the_literals_written_as_they_are_need_no_quotes() -> None:
    """`message_lines` writes a plain payload's channel, kind and keyword without looking for
    what needs quotes: the model's literals, which hold none."""
    keyword = MessageReceived.model_fields["keyword"].annotation
    literals = [*get_args(Channel), *get_args(MessageKind), *get_args(get_args(keyword)[0])]
    assert literals and all(NEEDS_QUOTES(text) is None for text in literals)


_TEXT = st.text(alphabet=st.sampled_from(list(',"\r\n\x00 aé€😀\t\\{}[]:')) | st.characters())
# Texts a cell holds, those that need quotes (a comma, a quote, a line break) drawn often.
_CELL = st.sampled_from(["", "SM1", "a,b", 'say "hi"', "two\nlines", "cr\r", "é😀"]) | _TEXT
_AT = datetime(2026, 1, 31, 23, 30, 0, 5, tzinfo=UTC)
_TIMES = st.none() | st.datetimes(
    min_value=datetime(1850, 1, 1),  # noqa: DTZ001 - st.datetimes bounds are naive
    timezones=st.just(UTC) | st.timezones(),
)
_RECEIVED = st.fixed_dictionaries(
    {
        "message_sid": _CELL, "to_address": st.just("+15005550006"),
        "channel": st.sampled_from(get_args(Channel)), "profile_name": st.none(),
        "wa_id": st.none(), "keyword": st.sampled_from([None, "STOP", "HELP"]), "body": _CELL,
        "from_address": st.just(PHONE),
        "media": st.lists(
            st.fixed_dictionaries({"url": _CELL, "content_type": st.just("image/png")}),
            max_size=2,
        ),
    }
)  # fmt: skip
_QUEUED = st.builds(
    lambda outbox_id, body, kind, channel, to: MessageQueued(
        outbox_id=outbox_id, to_address=PHONE, channel=channel, body=body, kind=kind,
        to_participant=to,
    ).model_dump(mode="json"),
    _CELL, st.none() | _CELL, st.sampled_from(get_args(MessageKind)),
    st.sampled_from(get_args(Channel)), st.booleans(),
)  # fmt: skip
_OUTBOX = st.fixed_dictionaries(
    {
        "status": st.none() | st.sampled_from(["sent", "failed", "a,b"]),
        "error_code": st.none() | st.integers(0, 10**6),
        "error_message": st.none() | _CELL, "provider_sid": st.none() | _CELL,
        "sent_at": _TIMES, "updated_at": _TIMES,
    }
)  # fmt: skip


@given(
    st.lists(st.tuples(st.booleans(), _RECEIVED, _QUEUED, st.none() | _OUTBOX), max_size=5),
    st.sampled_from(["Asia/Kolkata", "America/St_Johns", "UTC", "Not/AZone", "a,b"]),
)
def test_rows_made_from_payloads_are_what_csv_line_writes_of_the_records(
    messages: list[tuple[bool, dict, dict, dict | None]], tz_name: str
) -> None:
    rows, outbox = [], {}
    for n, (inbound, in_data, out_data, sent) in enumerate(messages):
        kind = "message.received" if inbound else "message.queued"
        data = in_data if inbound else out_data
        at = _AT.astimezone(timezone(timedelta(hours=-n))) if n % 2 else _AT
        rows.append(StoredEvent(n + 1, f"e-{n}", "participant:p,1", n + 1, kind, 1, data, {},
                                None, at, at))  # fmt: skip
        if sent is not None and not inbound:
            outbox[out_data["outbox_id"]] = sent
    participant = {"participant_id": "p,1", "timezone": tz_name}

    records = message_records(rows, outbox, participant, None, row_to_event)

    assert message_lines(rows, outbox, participant, None, row_to_event) == _lines(records)


@pytest.mark.parametrize("sid", ["\r", "=1+1", "\t@x"])
def test_an_inbound_sid_a_spreadsheet_reads_as_a_formula_is_defused_as_csv_line_does(
    sid: str,
) -> None:
    data = {
        "message_sid": sid, "to_address": "+15005550006", "channel": "sms",
        "profile_name": None, "wa_id": None, "keyword": None, "body": "hi",
        "from_address": PHONE, "media": [],
    }  # fmt: skip
    rows = [
        StoredEvent(1, "e-0", "participant:p,1", 1, "message.received", 1, data, {}, None,
                    _AT, _AT)
    ]  # fmt: skip
    participant = {"participant_id": "p,1", "timezone": "UTC"}

    lines = message_lines(rows, {}, participant, None, row_to_event)

    assert lines == _lines(message_records(rows, {}, participant, None, row_to_event))
    assert "'" + sid.replace('"', '""') in lines[0]
