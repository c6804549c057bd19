"""Stored event rows as the layers above read them: sealed personal fields opened
(`opened_row`; `opened_scan`, each stream's key looked up once; `opened_raw`, the same from
the driver's rows in one step; `opened_scanned`, a scan's, each batch's data keys read in one
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
    participant_of,
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


def opened_scan(rows: Iterable[Any], sealer: Sealer, conn: Connection) -> Iterator[Any]:
    """`opened_row` of each of `rows` (a batch's, read in a few milliseconds), each stream's
    data key looked up once (`Sealer.opening_key`), not for each row, and a scanned row's
    payload opened by `Sealer.open_with`; any other row, and any payload that needs more (its
    fields erased, originals kept aside), through `opened_row`."""
    if not sealer.enabled:
        yield from (opened_row(row, sealer, conn) for row in rows)
        return
    new, open_with = StoredEvent._make, sealer.open_with
    keys: dict[str, Any] = {}
    for row in rows:
        data = row.data
        if SEALED not in data:
            yield row
            continue
        stream = row.stream_id
        if stream in keys:
            key = keys[stream]
        else:
            key = keys[stream] = sealer.opening_key(conn, stream)
        plain = None
        if key is not None and type(row) is StoredEvent:
            plain = open_with(key, row.event_id, data)
        if plain is None:
            yield opened_row(row, sealer, conn)
        else:
            yield new((*row[:6], plain, row.meta or {}, *row[8:]))


def opened_raw(
    raw: Iterable[Sequence[Any]], dialect: Any, sealer: Sealer, conn: Connection
) -> Iterator[StoredEvent]:
    """`opened_scan(map(maker(dialect), raw), sealer, conn)` in one step: the rows of
    `scan_query` as the driver returns them, each made into its StoredEvent with its sealed
    payload already opened, not made once sealed and again opened (0.8 us a row less, some 13 %
    of making and opening an export's rows). Any row that needs more than `Sealer.open_with`
    goes through `opened_row`, as in `opened_scan`; with no master key, or columns `maker`
    converts otherwise, the two steps themselves. tests/store/test_sealing.py holds the ways
    to the same rows."""
    four = typed_four(dialect)
    if four is None or not sealer.enabled:
        yield from opened_scan(map(maker(dialect), raw), sealer, conn)
        return
    data_of, meta_of, occurred_of, recorded_of = four
    new, open_with, opening_key = StoredEvent._make, sealer.open_with, sealer.opening_key
    keys: dict[str, Any] = {}
    for seq, eid, sid, version, kind, schema, stored, meta, key, occurred, recorded in raw:
        data = data_of(stored)
        if SEALED not in data:
            yield new((seq, eid, sid, version, kind, schema, data, meta_of(meta), key,
                       occurred_of(occurred), recorded_of(recorded)))  # fmt: skip
            continue
        if sid in keys:
            opening = keys[sid]
        else:
            opening = keys[sid] = opening_key(conn, sid)
        plain = None if opening is None else open_with(opening, eid, data)
        if plain is None:
            row = new((seq, eid, sid, version, kind, schema, data, meta_of(meta), key,
                       occurred_of(occurred), recorded_of(recorded)))  # fmt: skip
            yield opened_row(row, sealer, conn)
        else:
            yield new((seq, eid, sid, version, kind, schema, plain, meta_of(meta) or {}, key,
                       occurred_of(occurred), recorded_of(recorded)))  # fmt: skip


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
            sealer.preload(conn, [pid for pid in map(participant_of, streams) if pid is not None])
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
