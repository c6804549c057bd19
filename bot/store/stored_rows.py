"""Stored event rows as the layers above read them: sealed personal fields opened
(`opened_row`; `opened_raw`, the driver's rows of a scan made and opened in one step, each
stream's key looked up once; `opened_scanned`, a scan's, each batch's data keys read in one
query) and payloads decoded into their models (`row_to_event`,
`decode_stored`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Connection

from bot.store.events import (
    REGISTRY,
    Event,
    EventData,
    InvalidEventData,
    decode,
    key_owner,
    stored_event,
)
from bot.store.scan import StoredEvent, batches, maker, scan_query, typed_four
from bot.store.sealing import SEALED, SealedWithoutKey, Sealer


def row_to_event(row: Any, sealer: Sealer | None = None, conn: Connection | None = None) -> Event:
    """The event of a stored row; `sealer` and `conn` open its sealed personal fields (a row
    from `EventStore.read_rows` is opened already)."""
    data, meta = row.data, row.meta or {}
    if SEALED in data:
        if sealer is None:
            raise SealedWithoutKey(f"event at seq {row.seq} is sealed: read it through the store")
        data, meta = _opened(sealer, conn, row)
    return stored_event(
        row.seq,
        row.event_id,
        row.stream_id,
        row.stream_version,
        decode_stored(row.event_type, row.schema_version, data, seq=row.seq, meta=meta),
        meta,
        row.idempotency_key,
        row.occurred_at,
        row.recorded_at,
    )


def _opened(sealer: Sealer, conn: Connection | None, row: Any) -> tuple[dict[str, Any], dict]:
    """A row's plain payload, and its meta with what the sealing kept aside put back."""
    opened = sealer.open(conn, row.stream_id, row.event_id, row.event_type, row.data)
    meta = row.meta or {}
    if not opened.escaped and not opened.erased:  # most rows: the row's meta as it is
        return opened.data, meta
    meta = dict(meta)
    if opened.escaped:
        meta["escaped"] = {**meta.get("escaped", {}), **opened.escaped}
    if opened.erased:
        meta["erased"] = opened.erased
    return opened.data, meta


class StoredRow(SimpleNamespace):
    """An event row with its personal fields opened: the columns as attributes."""

    @property
    def _mapping(self) -> dict[str, Any]:
        return vars(self)


def opened_row(row: Any, sealer: Sealer, conn: Connection | None) -> Any:
    """`row` as it reads with its sealed fields opened (the same row when nothing is sealed)."""
    if SEALED not in row.data:
        return row
    data, meta = _opened(sealer, conn, row)
    if type(row) is StoredEvent:  # a scanned row (export, replay): a StoredEvent again
        return StoredEvent._make((*row[:6], data, meta, *row[8:]))
    return StoredRow(**{**row._asdict(), "data": data, "meta": meta})


def _as_is(value: Any) -> Any:
    return value


def opened_raw(
    raw: Iterable[Sequence[Any]], dialect: Any, sealer: Sealer, conn: Connection
) -> Iterator[StoredEvent]:
    """`opened_row` of each of the rows of `scan_query` as the driver returns them (a batch's,
    read in a few milliseconds): each made into its StoredEvent with its sealed payload
    already opened, by `Sealer.open_with` with its stream's data key looked up once
    (`Sealer.opening_key`), not for each row. A row is made once, opened, not once sealed
    and again once opened (half the rows to make). A payload that needs more (its fields
    erased, originals kept aside, no master key to open it) goes through `opened_row`. Where
    `maker` converts other columns than the four of `typed_four` (neither SQLite nor
    PostgreSQL), each row is made by `maker` first.
    tests/store/test_sealing.py holds it to `opened_row`."""
    four = typed_four(dialect)
    if four is None:
        raw, four = map(maker(dialect), raw), (_as_is, _as_is, _as_is, _as_is)
    data_of, meta_of, occurred_of, recorded_of = four
    new, open_with, opening_key = StoredEvent._make, sealer.open_with, sealer.opening_key
    keys: dict[str, Any] = {}
    for seq, eid, sid, version, kind, schema, stored, meta, key, occurred, recorded in raw:
        data, extra = data_of(stored), meta_of(meta)
        at, kept_at = occurred_of(occurred), recorded_of(recorded)
        if SEALED in data:
            if sid in keys:
                opening = keys[sid]
            else:
                opening = keys[sid] = opening_key(conn, sid)
            plain = None if opening is None else open_with(opening, eid, data)
            if plain is None:
                row = new((seq, eid, sid, version, kind, schema, data, extra, key, at, kept_at))
                yield opened_row(row, sealer, conn)
                continue
            data, extra = plain, extra or {}
        yield new((seq, eid, sid, version, kind, schema, data, extra, key, at, kept_at))


def opened_scanned(
    conn: Connection,
    where: Sequence[Any],
    order_by: Sequence[Any],
    sealer: Sealer,
    batch: int = 1000,
) -> Iterator[StoredEvent]:
    """The event rows of `scan(conn, where, order_by, batch)` opened (`opened_raw`), for reads
    of many rows (replay, `EventStore.read_rows`, an export's events in order of seq): the rows
    fetched `batch` at a time, the data keys of each batch's participants read in one query
    (`Sealer.preload`) rather than one query each, then each row made and opened."""
    dialect = conn.dialect
    for raw in batches(conn, scan_query(dialect, where, order_by), batch):
        if sealer.enabled:
            streams = {row[2] for row in raw}  # stream_id: a stream's rows, once
            sealer.preload(conn, [pid for pid in map(key_owner, streams) if pid is not None])
        yield from opened_raw(raw, dialect, sealer, conn)


def decode_stored(
    event_type: str, schema_version: int, data: Any, seq: int | None, meta: Any
) -> EventData:
    """`decode`, except that a payload with erased fields that no longer validates (a phone
    number that reads `[erased]`) is built as it is: erased data is shown, never refused."""
    if not meta.get("erased"):
        return decode(event_type, schema_version, data, seq=seq)
    try:
        return decode(event_type, schema_version, data, seq=seq)
    except InvalidEventData:
        return REGISTRY[event_type].model_construct(**data)
