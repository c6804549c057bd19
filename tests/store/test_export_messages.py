"""messages.csv's records read from stored payloads are exactly those the typed path (each
event decoded into its model, then a transcript line) makes, sealed, escaped and erased data,
and payloads the plain reading must refuse, included."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.clock import FakeClock
from bot.store import erasure
from bot.store.event_store import EventStore
from bot.store.event_types.messages import Media, MessageQueued, MessageReceived, MessageSent
from bot.store.events import Event, NewEvent, participant_of, participant_stream
from bot.store.export import _histories, _outbox_groups
from bot.store.export_messages import MESSAGE_TYPES, message_record, message_records, plain_payload
from bot.store.jobs import last_seq
from bot.store.scan import StoredEvent
from bot.store.stored_rows import row_to_event
from bot.store.transcript import LINE_TYPES, build
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
        [(_, outbox)] = _outbox_groups(conn, [pid])
    plain = message_records(rows, outbox, PARTICIPANT, since, row_to_event)
    typed = _typed([row_to_event(r) for r in rows], outbox, since)
    return plain, typed, rows


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
    with store.transaction() as tx:
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
