"""Replay: rebuild every projection from the events and compare it with the stored tables."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, update

from bot.store.bulk_gc import fewer_collections
from bot.store.event_store import EventStore
from bot.store.events import InvalidEventData, UnknownEventType, participant_stream
from bot.store.projections import Folding, Projection, Row
from bot.store.scan import records
from bot.store.schema import PROJECTION_TABLES
from bot.store.stored_rows import row_to_event


@dataclass
class Difference:
    projection: str
    key: str
    kind: str  # "missing" (rebuilt, not stored), "extra" (stored, not rebuilt), "changed"
    columns: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # column -> (stored, rebuilt)

    def describe(self) -> str:
        if self.kind != "changed":
            return f"{self.projection} {self.key}: {self.kind}"
        cols = ", ".join(
            f"{c}: stored {s!r} != rebuilt {r!r}" for c, (s, r) in self.columns.items()
        )
        return f"{self.projection} {self.key}: {cols}"


@dataclass
class ReplayReport:
    events: int = 0
    rebuilt: dict[str, dict[str, Row]] = field(default_factory=dict)
    differences: list[Difference] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "seq N: why"
    participant_id: str | None = None  # a rebuild of one participant's stream only

    @property
    def clean(self) -> bool:
        return not self.differences and not self.unreadable


def rebuild(
    store: EventStore,
    progress: Callable[[int], None] | None = None,
    *,
    participant_id: str | None = None,
) -> ReplayReport:
    """Fold every event, in global order, into fresh in-memory projections; with
    `participant_id`, only that participant's stream (their rows of every projection: the
    participants row with its conversation memory, timers, outbox, work items, alerts...), which
    `compare(..., participant_id=...)` and `repair` then check and rewrite alone. The cyclic
    collector runs rarely meanwhile (bot.store.bulk_gc)."""
    with fewer_collections():
        return _rebuild(store, progress, participant_id)


def _rebuild(
    store: EventStore, progress: Callable[[int], None] | None, participant_id: str | None
) -> ReplayReport:
    report = ReplayReport(rebuilt={p.name: {} for p in store.projections})
    report.participant_id = participant_id
    stream_id = participant_stream(participant_id) if participant_id is not None else None
    folding = Folding(store.projections)
    folds: dict[str, list[tuple[Any, Any, dict[str, Row]]]] = {}  # by event type
    for raw in store.read_rows(stream_id=stream_id):
        report.events += 1
        if progress is not None:
            progress(1)
        try:
            ev = row_to_event(raw)
        except (UnknownEventType, InvalidEventData) as exc:
            report.unreadable.append(f"seq {raw.seq}: {exc}")
            continue
        kind = raw.event_type
        if kind not in folds:  # the projections that fold this type (Projection.types)
            folds[kind] = [(p.key, p.apply, report.rebuilt[p.name]) for p in folding[kind]]
        for key_of, apply, rows in folds[kind]:
            key = key_of(ev)
            if key is None:
                continue
            after = apply(rows.get(key), ev)
            if after is not None:
                rows[key] = after
    return report


def compare(store: EventStore, report: ReplayReport) -> None:
    """Fill `report.differences` with how the stored projections differ from the rebuilt ones
    (reading every stored row, with the cyclic collector running rarely: bot.store.bulk_gc)."""
    with fewer_collections():
        _compare(store, report)


def _compare(store: EventStore, report: ReplayReport) -> None:
    for projection in store.projections:
        table = PROJECTION_TABLES[projection.name]
        if report.participant_id is not None and "participant_id" not in table.c:
            continue  # not a participant's rows (staff): left to a whole replay
        stored = _stored_rows(store, projection, report.participant_id)
        rebuilt = report.rebuilt[projection.name]
        if stored == rebuilt:  # the same keys, every row equal (most replays): at C speed
            continue
        for key in sorted(set(stored) | set(rebuilt)):
            if key not in stored:
                report.differences.append(Difference(projection.name, key, "missing"))
            elif key not in rebuilt:
                report.differences.append(Difference(projection.name, key, "extra"))
            else:
                have, want = stored[key], rebuilt[key]
                if have == want:  # equal rows hold equal columns: most rows, checked at C speed
                    continue
                changed = {
                    col: (have.get(col), want.get(col))
                    for col in projection.columns
                    if not _same(have.get(col), want.get(col))
                }
                if changed:
                    report.differences.append(Difference(projection.name, key, "changed", changed))


def repair(store: EventStore, report: ReplayReport, names: Sequence[str] = ()) -> int:
    """Overwrite stored projection rows with the rebuilt ones; returns the rows written."""
    if report.unreadable:
        raise ValueError("refusing to repair while some events cannot be read")
    written = 0
    with store.transaction() as tx:
        for diff in report.differences:
            if names and diff.projection not in names:
                continue
            projection = next(p for p in store.projections if p.name == diff.projection)
            table = PROJECTION_TABLES[projection.name]
            row = report.rebuilt[projection.name].get(diff.key)
            if diff.kind == "missing":
                tx.conn.execute(insert(table).values(row))
            elif diff.kind == "changed":
                tx.conn.execute(
                    update(table)
                    .where(table.c[projection.key_column] == diff.key)
                    .values({col: row[col] for col in diff.columns})
                )
            else:
                continue  # an extra row is reported, never deleted: a person should look at it
            written += 1
    return written


def _stored_rows(
    store: EventStore, projection: Projection, participant_id: str | None = None
) -> dict[str, Row]:
    """The stored rows of a projection by key, each value as a typed select reads it
    (`bot.store.scan.records`), fetched in batches (a server-side cursor on PostgreSQL)."""
    table = PROJECTION_TABLES[projection.name]
    where = [table.c.participant_id == participant_id] if participant_id is not None else []
    key = projection.key_column
    found: dict[str, Row] = {}
    with store.reading() as conn:
        for rows in records(conn, table, projection.columns, where):
            found.update(zip([str(row[key]) for row in rows], rows, strict=True))
    return found


def _same(stored: Any, rebuilt: Any) -> bool:
    """Whether a stored column holds what the replay rebuilt: equal values (most columns)
    are, and so are values that read the same once normalised (a datetime and its ISO text,
    JSON with its keys in another order)."""
    return stored == rebuilt or _norm(stored) == _norm(rebuilt)


def _norm(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, default=str)
    return value
