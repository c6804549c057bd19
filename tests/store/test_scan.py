"""`scan` reads event rows as a typed `select(events)` reads them, value for value."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from bot.store.event_store import EventStore
from bot.store.events import NewEvent, participant_stream
from bot.store.scan import scan
from bot.store.schema import events
from tests.factories import enrolled, received


def test_scanned_rows_hold_what_a_typed_select_returns(store: EventStore) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    whole_second = datetime(2026, 1, 31, 8, 0, tzinfo=UTC)  # stored without a fraction shown
    store.append(stream, [NewEvent(received("SM1", 'café, "quoted"\n'), whole_second)])
    store.append(stream, [received("SM2", "nul\x00byte")], idempotency_key="k-1")  # escaped
    store.append("system", [NewEvent(enrolled(phone="+14155550000"), meta={"actor": "cli"})])

    with store.reading() as conn:
        typed = [tuple(r) for r in conn.execute(select(events).order_by(events.c.seq))]
        scanned = [tuple(r) for r in scan(conn, order_by=[events.c.seq], batch=2)]

    assert scanned == typed
    assert [type(v) for v in scanned[1]] == [type(v) for v in typed[1]]
    assert scanned[1][9].tzinfo is not None
