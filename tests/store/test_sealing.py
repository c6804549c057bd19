"""Sealing at the store's boundary: personal fields are stored encrypted with the participant's
data key and read back in plain; the wrong or a missing master key is a clear error; the master
key rotates without touching an event."""

from __future__ import annotations

import pytest
from sqlalchemy import event, select, update

from bot.core import keys
from bot.core.clock import FakeClock
from bot.core.config import ConfigError, load_settings
from bot.keys.rotation import rotate
from bot.runtime.bootstrap import build_store
from bot.store import stored_rows
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.events import (
    SYSTEM_STREAM,
    new_id,
    participant_of,
    participant_stream,
    sender_stream,
)
from bot.store.queries import enrolled_with_phone, sender_with_phone
from bot.store.scan import maker, scan, scan_query
from bot.store.schema import data_keys, events, participant_phones
from bot.store.sealing import SealedWithoutKey, Sealer
from bot.store.stored_rows import opened_raw, opened_row, opened_scanned
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled, received

PHONE = "+14155550123"
NEW_KEY = keys.generate_master_key()


def _raw(store: EventStore, stream: str) -> list[dict]:
    with store.reading() as conn:
        query = select(events.c.data, events.c.meta).where(events.c.stream_id == stream)
        return [{"data": r.data, "meta": r.meta} for r in conn.execute(query)]


def _person(store: EventStore, body: str = "my secret walk", phone: str = PHONE) -> str:
    person = enrolled(phone, name="Ada Sealwright")
    stream = participant_stream(person.participant_id)
    store.append(stream, [person, received("SM1", body=body, phone=phone)])
    return stream


def test_personal_fields_are_stored_sealed_and_read_back_plain(store: EventStore) -> None:
    stream = _person(store)

    stored = str(_raw(store, stream))
    loaded = store.load(stream)

    for secret in (PHONE, "Ada Sealwright", "my secret walk"):
        assert secret not in stored
    assert (loaded[0].data.name, loaded[1].data.body) == ("Ada Sealwright", "my secret walk")
    assert list(store.read_all(stream_id=stream))[1].data.body == "my secret walk"
    # What is not personal stays queryable in plain.
    assert _raw(store, stream)[1]["data"]["message_sid"] == "SM1"


def test_a_nul_in_a_sealed_field_is_kept_inside_the_seal_not_in_the_meta(
    store: EventStore,
) -> None:
    stream = _person(store, body="walk\x00ed")

    [_, row] = _raw(store, stream)
    [_, event] = store.load(stream)

    assert "escaped" not in row["meta"]
    assert event.data.body == "walk\ufffded"
    assert "body" in event.meta["escaped"]


def test_the_sealed_part_cannot_be_moved_to_another_event(store: EventStore) -> None:
    stream = _person(store)
    [enrolled_row, received_row] = _raw(store, stream)
    sealer = store.sealer
    with store.reading() as conn:
        with pytest.raises(SealedWithoutKey, match="fails its check"):
            sealer.open(conn, stream, "another-event-id", "message.received", received_row["data"])


def test_a_store_with_another_master_key_refuses_to_read_naming_both_keys(
    store: EventStore, database_url: str
) -> None:
    stream = _person(store)
    other = EventStore(make_engine(database_url), sealer=Sealer(NEW_KEY))
    try:
        with pytest.raises(SealedWithoutKey, match="wrapped by master key"):
            other.load(stream)
    finally:
        other.engine.dispose()


def test_a_store_without_a_master_key_refuses_to_read_sealed_events(
    store: EventStore, database_url: str
) -> None:
    stream = _person(store)
    plain = EventStore(make_engine(database_url))
    try:
        with pytest.raises(SealedWithoutKey, match="set TANDEM_MASTER_KEY"):
            plain.load(stream)
    finally:
        plain.engine.dispose()


def test_rotation_rewraps_every_data_key_and_rekeys_the_phone_lookup(
    store: EventStore, database_url: str
) -> None:
    stream = _person(store)
    before = _raw(store, stream)

    done = rotate(store, NEW_KEY)

    assert (done.rewrapped, done.phones) == (1, 1)
    assert _raw(store, stream) == before  # not one event changed
    rotated = EventStore(make_engine(database_url), clock=FakeClock(), sealer=Sealer(NEW_KEY))
    try:
        assert rotated.load(stream)[1].data.body == "my secret walk"
        with rotated.reading() as conn:
            assert enrolled_with_phone(conn, PHONE, rotated.sealer.phones) is not None
            assert enrolled_with_phone(conn, PHONE, store.sealer.phones) is None
            [key_id] = conn.execute(select(data_keys.c.master_key_id)).scalars()
        assert key_id == keys.key_id(NEW_KEY)
    finally:
        rotated.engine.dispose()


def test_rotation_rekeys_an_unknown_senders_number_so_it_is_still_found(
    store: EventStore, database_url: str
) -> None:
    sender_id = new_id()
    store.append(sender_stream(sender_id), [received("SM7", body="who is this", phone=PHONE)])

    done = rotate(store, NEW_KEY)

    assert (done.rewrapped, done.phones) == (1, 1)
    rotated = EventStore(make_engine(database_url), clock=FakeClock(), sealer=Sealer(NEW_KEY))
    try:
        with rotated.reading() as conn:
            assert sender_with_phone(conn, PHONE, rotated.sealer.phones) == sender_id
            assert sender_with_phone(conn, PHONE, store.sealer.phones) is None
        assert rotated.load(sender_stream(sender_id))[0].data.body == "who is this"
    finally:
        rotated.engine.dispose()


def test_phones_are_looked_up_by_a_keyed_hash_not_the_number(store: EventStore) -> None:
    _person(store)
    with store.reading() as conn:
        [digest] = conn.execute(select(participant_phones.c.phone_hmac)).scalars()
        found = enrolled_with_phone(conn, PHONE, store.sealer.phones)
    assert PHONE not in digest and len(digest) == 64
    assert digest == keys.PhoneHasher.for_master_key(TEST_MASTER_KEY).digest(PHONE)
    assert digest != keys.PhoneHasher().digest(PHONE)  # keyed: not the unkeyed hash
    assert found is not None and found["phone"] == PHONE


def test_each_purpose_gets_its_own_key_never_the_master_key() -> None:
    derived = {p: keys.derive(TEST_MASTER_KEY, p) for p in ("wrap", "phone", "session")}
    assert len(set(derived.values())) == 3
    assert TEST_MASTER_KEY.encode() not in derived.values()
    assert all(len(k) == 32 for k in derived.values())


def test_production_without_a_master_key_refuses_to_start(database_url: str) -> None:
    settings = load_settings(
        {
            "DATABASE_URL": database_url,
            "MESSENGER": "twilio",
            "SUPERVISOR_PHONES": "+15005550001",
            "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
            "TWILIO_AUTH_TOKEN": "x" * 32,
            "TWILIO_FROM_NUMBER": "+15005550006",
        },
        env_file=None,
    )
    with pytest.raises(ConfigError, match="TANDEM_MASTER_KEY: MESSENGER=twilio needs"):
        build_store(settings)


def test_a_generated_master_key_is_32_random_bytes_in_urlsafe_base64() -> None:
    import base64

    made = {keys.generate_master_key() for _ in range(5)}
    assert len(made) == 5
    assert all(len(base64.urlsafe_b64decode(k)) == 32 for k in made)


def _key_reads(store: EventStore, read) -> tuple[list, int]:  # noqa: ANN001
    """What `read` returns, and how many queries of `data_keys` it ran."""
    issued: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        if "FROM data_keys" in statement:
            issued.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        return read(), len(issued)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


def test_a_whole_read_opens_many_participants_events_with_a_key_query_per_batch(
    store: EventStore, database_url: str
) -> None:
    """Not one query for each participant's data key: that cost more than the opening."""
    for n in range(5):
        person = enrolled(f"+1415555020{n}", name=f"Ada {n}")
        stream = participant_stream(person.participant_id)
        store.append(stream, [person, received(f"SM{n}", body=f"walk {n}", phone=person.phone)])
    fresh = EventStore(make_engine(database_url), sealer=Sealer(TEST_MASTER_KEY))  # no key cached
    try:
        rows, reads = _key_reads(fresh, lambda: list(fresh.read_rows()))
    finally:
        fresh.engine.dispose()
    assert [r.data["body"] for r in rows if r.event_type == "message.received"] == [
        f"walk {n}" for n in range(5)
    ]
    assert reads == 1


def test_a_whole_read_with_another_master_key_refuses_at_the_event_naming_both_keys(
    store: EventStore, database_url: str
) -> None:
    _person(store)
    other = EventStore(make_engine(database_url), sealer=Sealer(NEW_KEY))
    try:
        with pytest.raises(SealedWithoutKey, match="wrapped by master key"):
            list(other.read_rows())
    finally:
        other.engine.dispose()


def test_a_lone_surrogate_in_a_sealed_field_opens_as_it_was_sealed(store: EventStore) -> None:
    person = enrolled(PHONE)
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    data = received("SM1", body="x", phone=PHONE).model_dump(mode="json")
    data["body"] = "walk \ud800 ed"
    with store.transaction() as tx:
        sealed, _ = store.sealer.seal(
            tx.conn, stream, "e-1", MessageReceived, data, {}, store.clock.now(), {}
        )
    assert "walk" not in str(sealed)
    with store.reading() as conn:
        opened = store.sealer.open(conn, stream, "e-1", "message.received", sealed)
    assert opened.data == data


@pytest.mark.parametrize("converted", ["the four columns inline", "each row by maker"])
def test_a_scans_rows_open_as_each_opens_alone_erased_kept_aside_and_plain_alike(
    store: EventStore, monkeypatch: pytest.MonkeyPatch, converted: str
) -> None:
    """From the driver's rows, `opened_raw` (export: a stream's key looked up once, the
    payload opened inline) and `opened_scanned` (replay, `read_rows`) give what `opened_row`
    gives for every kind of row: sealed, originals kept aside (a NUL), erased, and plain (a
    system stream's); and refuse what `opened_row` refuses. Both where the engine's columns
    are converted inline and where each row is made by `maker` first."""
    if converted == "each row by maker":
        monkeypatch.setattr(stored_rows, "typed_four", lambda _dialect: None)
    kept = _person(store, body="walk\x00ed")
    sealed = _person(store, body="my secret walk", phone="+14155550124")
    gone = _person(store, body="erase me", phone="+14155550125")
    store.append(SYSTEM_STREAM, [received("SM9", body="not a participant's", phone=PHONE)])
    with store.transaction() as tx:  # as the owner: no participant.erased needed here
        tx.conn.execute(
            update(data_keys)
            .where(data_keys.c.participant_id == participant_of(gone))
            .values(wrapped=None, erased_at=store.clock.now())
        )
    store.sealer.forget(participant_of(gone) or "")
    with store.reading() as conn:
        rows = list(scan(conn, order_by=[events.c.seq]))
        alone = [opened_row(row, store.sealer, conn) for row in rows]
        raw = conn.execute(scan_query(conn.dialect, order_by=[events.c.seq])).all()
        made = list(opened_raw(raw, conn.dialect, store.sealer, conn))
        scanned = list(opened_scanned(conn, [], [events.c.seq], store.sealer, batch=4))
    assert made == alone
    assert scanned == alone
    assert [type(r) for r in made + scanned] == [type(r) for r in alone + alone]
    bodies = {r.stream_id: r.data["body"] for r in made if r.event_type == "message.received"}
    assert bodies[sealed] == "my secret walk"
    assert bodies[kept] == "walk\ufffded" and "body" in made[1].meta["escaped"]
    assert bodies[gone] == "[erased]" and made[5].meta["erased"]
    assert bodies[SYSTEM_STREAM] == "not a participant's"

    nulled = (*raw[3][:7], "null", *raw[3][8:])  # a JSON null for meta reads as {}, as alone
    with store.reading() as conn:
        [opened] = opened_raw([nulled], conn.dialect, store.sealer, conn)
        assert opened == opened_row(maker(conn.dialect)(nulled), store.sealer, conn)
    assert opened.meta == {} and opened.data["body"] == "my secret walk"
    moved_raw = (*raw[3][:1], raw[1][1], *raw[3][2:])  # another event's seal
    with store.reading() as conn, pytest.raises(SealedWithoutKey, match="fails its check"):
        list(opened_raw([moved_raw], conn.dialect, store.sealer, conn))
