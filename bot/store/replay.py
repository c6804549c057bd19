"""Replay: rebuild every projection from the events and compare it with the stored tables.

A projection's row is a fold of the events whose key is the row's, in global order, and of no
others (`Projection.key`, `apply`). So the rows can be rebuilt in parts, each part folding the
events of some streams, as long as no row takes events of two parts. `check(jobs=N)` does that
in worker processes (bot.store.jobs), all in one snapshot: the streams are split into chunks,
ranges of stream ids of about as many events each (four for each process), at participants'
streams (the system's and staff's streams fall in the last), which every process, the caller's
too, takes in turn until none is left, so that they end together whatever else each does.
Equal chunks, not the export's largest-first: each chunk's read scans its stream range on
PostgreSQL, so more, smaller chunks cost more there. A chunk's events are read in global order
by the seqs the streams' index holds for its range, so that SQLite does not sort the range's
rows. Each worker folds its chunk's events, in global order, and compares
the rows it rebuilt whose participant (`participant_id`) is in its range with the stored rows
of those participants; it sends the others (a row of no participant: staff, a system alert)
to the caller, which compares them with the stored rows of no participant meanwhile read. The
caller then checks what makes the parts sound: each worker also sends the keys its events
touched, and if a key was touched in two parts, or a worker rebuilt a row of a participant out
of its range, or the parts disagree about one row (missing in one, extra in another), the
check is made again in one process and the report says why (`ReplayReport.again`). A worker
sends only the rebuilt rows that differ (all that `repair` writes): rows cost more to send
between processes than to rebuild. Stored rows are read as tuples (bot.store.scan.value_rows)
and compared with the rebuilt rows' values in column order, not as a dict per row. A replay
keeps all it builds until it ends and makes no cyclic garbage, so it runs with the cyclic
collector running rarely (bot.store.bulk_gc). Figures: docs/performance.md (Replay).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, insert, select, update

from bot.store.bulk_gc import fewer_collections
from bot.store.event_store import EventStore
from bot.store.events import InvalidEventData, UnknownEventType, participant_stream
from bot.store.jobs import (
    Report,
    Workers,
    count_participants,
    cut,
    equal_shares,
    last_seq,
    process_count,
)
from bot.store.projections import Folding, Projection, Row
from bot.store.projections.columns import FOLDS
from bot.store.scan import value_rows
from bot.store.schema import PROJECTION_TABLES, events, participants
from bot.store.stored_rows import opened_scanned, row_to_event

# A projection's stored rows by key, each the tuple of its values of the projection's columns,
# in their order, as a typed select reads them (`bot.store.scan.value_rows`): compared with the
# rebuilt rows' values in that order (`_differences`), with no dict made of each stored row.
Stored = dict[str, tuple[Any, ...]]


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
    # rows rebuilt, by projection (`rebuilt` holds them all from one process; from workers,
    # only those that differ: what `repair` writes)
    counts: dict[str, int] = field(default_factory=dict)
    workers: int = 0  # worker processes that checked chunks with this one (`check`)
    again: str | None = None  # why a check in parts was made again in one process

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
    unreadable = _fold(store.read_rows(stream_id=stream_id), store.projections, report, progress)
    report.unreadable = [why for _seq, why in unreadable]
    report.counts = {name: len(rows) for name, rows in report.rebuilt.items()}
    return report


def _fold(
    rows: Iterable[Any],
    projections: Sequence[Projection],
    report: ReplayReport,
    progress: Callable[[int], None] | None,
    touched: dict[str, set[str]] | None = None,
) -> list[tuple[int, str]]:
    """Fold `rows` (opened event rows, in global order) into `report.rebuilt`, counting them
    in `report.events` and adding to `touched` (by projection) every key an event touched;
    returns the rows that cannot be read, as (seq, why)."""
    folding = Folding(projections)
    folds: dict[str, list[tuple[Any, Any, dict[str, Row], set[str] | None]]] = {}  # by type
    unreadable: list[tuple[int, str]] = []
    for raw in rows:
        report.events += 1
        if progress is not None:
            progress(1)
        try:
            ev = row_to_event(raw)
        except (UnknownEventType, InvalidEventData) as exc:
            unreadable.append((raw.seq, f"seq {raw.seq}: {exc}"))
            continue
        kind = raw.event_type
        if kind not in folds:  # the projections that fold this type (Projection.types)
            folds[kind] = [
                (
                    p.key,
                    p.apply,
                    report.rebuilt[p.name],
                    None if touched is None else touched[p.name],
                )
                for p in folding[kind]
            ]
        for key_of, apply, rebuilt, keys in folds[kind]:
            key = key_of(ev)
            if key is None:
                continue
            if keys is not None:
                keys.add(key)
            after = apply(rebuilt.get(key), ev)
            if after is not None:
                rebuilt[key] = after
    return unreadable


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
        report.differences += _differences(projection, stored, report.rebuilt[projection.name])


def _differences(
    projection: Projection, stored: Stored, rebuilt: dict[str, Row]
) -> list[Difference]:
    """How `stored` rows of `projection` differ from `rebuilt` ones, in order of key."""
    names = projection.columns
    values = _values_of(names)
    try:
        shaped = {key: values(row) for key, row in rebuilt.items()}
    except KeyError:  # a rebuilt row without one of the columns: read as None, row by row
        shaped = {key: tuple(map(row.get, names)) for key, row in rebuilt.items()}
    if stored == shaped:  # the same keys, every row equal (most replays): at C speed
        return []
    found = []
    for key in sorted(set(stored) | set(shaped)):
        if key not in stored:
            found.append(Difference(projection.name, key, "missing"))
        elif key not in shaped:
            found.append(Difference(projection.name, key, "extra"))
        else:
            have, want = stored[key], shaped[key]
            if have == want:  # equal rows hold equal columns: most rows, checked at C speed
                continue
            changed = {
                col: (was, now)
                for col, was, now in zip(names, have, want, strict=True)
                if not _same(was, now) and not _same(_current(col, was), now)
            }
            if changed:
                found.append(Difference(projection.name, key, "changed", changed))
    return found


def _values_of(names: Sequence[str]) -> Callable[[Row], tuple[Any, ...]]:
    """What makes a rebuilt row the tuple of its values of `names`, in that order, as stored
    rows are read (`Stored`): at C speed."""
    if len(names) == 1:
        (name,) = names
        return lambda row: (row[name],)
    return itemgetter(*names)


# A part of a replay in parts has at least this many participants: fewer, and forking a worker
# costs more than it saves.
PART_PARTICIPANTS = 200
# How many events a worker folds between two reports of progress.
_REPORT_EVERY = 1000


def check(
    store: EventStore,
    progress: Callable[[int], None] | None = None,
    *,
    participant_id: str | None = None,
    jobs: int = 1,
) -> ReplayReport:
    """`rebuild` then `compare`: the report of how the stored projections differ from the
    events. With `jobs` above 1 and no `participant_id`, up to that many worker processes
    check parts of the streams at once, in one snapshot (this module's docstring); the
    report is the one a check in one process gives, except that `rebuilt` holds only the
    rows that differ. `progress` is given the events folded as they are; when the parts are
    not trusted, it is given minus the events they folded before the check is made again in
    one process, so that what it counts stays the events of one check."""
    if jobs < 1:
        raise ValueError(f"jobs must be 1 or more, not {jobs}")
    count = 0
    if participant_id is None and jobs > 1:
        with store.reading() as conn:  # ended before the workers are forked
            count = count_participants(conn)
    processes = process_count(jobs, count, PART_PARTICIPANTS, "replay") if count else 0
    again = None
    if processes:
        report = _check_in_parts(store, progress, processes)
        if report.again is None:
            return report
        again = report.again
        if progress is not None:
            progress(-report.events)  # counted again by the check in one process
    report = rebuild(store, progress, participant_id=participant_id)
    compare(store, report)
    report.again = again
    return report


@dataclass(frozen=True)
class _Part:
    """A worker's range of stream ids: from the stream of participant `low` (None: the first
    stream) to before that of `high` (None: past the last). Ids are compared by code point, as
    Python compares them: on PostgreSQL in the "C" collation, whatever the database's."""

    low: str | None
    high: str | None

    def streams(self, dialect: Any) -> list[Any]:
        """Where the events of the range's streams are: those whose seq is one of theirs,
        found in the streams' index (which holds each event's seq). A read of them in order of
        seq then looks each row up by its seq, in that order; the range read straight through
        the streams' index was sorted by seq whole, rows and all (SQLite's sorter took a tenth
        of a replay in parts)."""
        seqs = select(events.c.seq).where(
            *self._within(events.c.stream_id, dialect, participant_stream)
        )
        return [events.c.seq.in_(seqs)]

    def rows(self, column: Any, dialect: Any) -> list[Any]:
        """Where the rows of the range's participants are (`column`: their participant_id)."""
        return [column.is_not(None), *self._within(column, dialect, lambda pid: pid)]

    def holds(self, participant_id: str) -> bool:
        return (self.low is None or participant_id >= self.low) and (
            self.high is None or participant_id < self.high
        )

    def _within(self, column: Any, dialect: Any, value: Callable[[str], str]) -> list[Any]:
        ordered = _by_code_point(column, dialect)
        where = []
        if self.low is not None:
            where.append(ordered >= value(self.low))
        if self.high is not None:
            where.append(ordered < value(self.high))
        return where


@dataclass
class _Checked:
    """What a worker sends back: its report (differences, counts, and the rebuilt rows that
    differ), the rows of no participant it rebuilt (the caller compares them), the keys its
    events touched, rows it rebuilt of a participant out of its range, and its unreadable
    events as (seq, why)."""

    report: ReplayReport
    unowned: dict[str, dict[str, Row]]
    touched: dict[str, set[str]]
    strays: list[str]
    unreadable: list[tuple[int, str]]


def _check_in_parts(
    store: EventStore, progress: Callable[[int], None] | None, processes: int
) -> ReplayReport:
    """The check in chunks of the streams that this process and `processes` - 1 workers take
    in turn (bot.store.jobs), their reports merged (`_merge`)."""
    report = ReplayReport(rebuilt={p.name: {} for p in store.projections})
    checked: list[_Checked] = []
    step = (lambda steps: progress(steps["events"])) if progress is not None else lambda _s: None

    def take(_index: int, part: _Checked) -> None:
        checked.append(part)

    with (
        fewer_collections(),
        Workers(store, processes - 1, _check_part, label="replay") as parts,
        ExitStack() as hold,
    ):
        hold.enter_context(parts.hold_writes())  # SQLite: until the workers share the snapshot
        with store.snapshot() as conn:
            upto = last_seq(conn)
            shares = equal_shares(processes, count_participants(conn), PART_PARTICIPANTS)
            parts.begin(conn, upto, _parts(conn, shares))
            hold.close()
            report.workers = parts.count
            unowned = {  # the stored rows of no participant, read before this one's chunks
                p.name: _read_stored(conn, p, _unowned(p)) for p in store.projections
            }

            def own_step(steps: dict[str, int]) -> None:
                step(steps)
                parts.poll(step, take)  # no worker waits to send while this one folds

            for _index, chunk in parts.claimed():
                checked.append(_check_part(store, conn, chunk, own_step))
            parts.results(step, take)
    _merge(store.projections, report, checked, unowned)
    return report


def _check_part(store: EventStore, conn: Connection, part: _Part, report: Report) -> _Checked:
    """A worker's check (bot.store.jobs): fold the events of `part`'s streams; compare the
    rebuilt rows of its participants with their stored ones; send back the rest."""
    checked = ReplayReport(rebuilt={p.name: {} for p in store.projections})
    touched: dict[str, set[str]] = {p.name: set() for p in store.projections}
    pending = [0]

    def counted(n: int) -> None:
        pending[0] += n
        if pending[0] >= _REPORT_EVERY:
            report({"events": pending[0]})
            pending[0] = 0

    rows = opened_scanned(conn, part.streams(conn.dialect), [events.c.seq], store.sealer)
    unreadable = _fold(rows, store.projections, checked, counted, touched)
    if pending[0]:
        report({"events": pending[0]})
    unowned: dict[str, dict[str, Row]] = {}
    strays: list[str] = []
    for projection in store.projections:
        rebuilt = checked.rebuilt[projection.name]
        checked.counts[projection.name] = len(rebuilt)
        if "participant_id" not in projection.columns:
            unowned[projection.name] = rebuilt
            checked.rebuilt[projection.name] = {}
            continue
        ours, theirs = _owned(rebuilt)
        unowned[projection.name] = theirs
        strays += [f"{projection.name} {key}" for key in _strays(ours, part)]
        table = PROJECTION_TABLES[projection.name]
        stored = _read_stored(conn, projection, part.rows(table.c.participant_id, conn.dialect))
        differences = _differences(projection, stored, ours)
        checked.differences += differences
        checked.rebuilt[projection.name] = {
            d.key: ours[d.key] for d in differences if d.key in ours
        }
    return _Checked(checked, unowned, touched, strays, unreadable)


def _owned(rebuilt: dict[str, Row]) -> tuple[dict[str, Row], dict[str, Row]]:
    """`rebuilt`'s rows of a participant (ours: those of the chunk's range, and any stray out
    of it: `_strays`) and of none (theirs), in one pass."""
    ours: dict[str, Row] = {}
    theirs: dict[str, Row] = {}
    for key, row in rebuilt.items():
        if row.get("participant_id") is None:
            theirs[key] = row
        else:
            ours[key] = row
    return ours, theirs


def _strays(ours: dict[str, Row], part: _Part) -> list[str]:
    """The keys of rows of `ours` whose participant is out of `part`'s range."""
    holds = part.holds
    return [key for key, row in ours.items() if not holds(row["participant_id"])]


def _merge(
    projections: Sequence[Projection],
    report: ReplayReport,
    checked: list[_Checked],
    unowned_stored: dict[str, Stored],
) -> None:
    """The workers' reports as one, with the rows of no participant compared here; or, if the
    parts were not sound, `report.again` set to why."""
    order = {p.name: n for n, p in enumerate(projections)}
    unreadable = heapq.merge(*(c.unreadable for c in checked))
    report.unreadable = [why for _seq, why in unreadable]
    for part in checked:
        report.events += part.report.events
        for name, count in part.report.counts.items():
            report.counts[name] = report.counts.get(name, 0) + count
    strays = [stray for part in checked for stray in part.strays]
    if strays:
        report.again = f"a part rebuilt a row of a participant out of its range ({strays[0]})"
        return
    for projection in projections:
        seen: set[str] = set()
        for part in checked:
            shared = seen & part.touched[projection.name]
            if shared:
                key = min(shared)
                report.again = f"events of two parts touch one row ({projection.name} {key})"
                return
            seen |= part.touched[projection.name]
    differences = [d for part in checked for d in part.report.differences]
    for projection in projections:
        rebuilt = {k: r for part in checked for k, r in part.unowned[projection.name].items()}
        found = _differences(projection, unowned_stored[projection.name], rebuilt)
        differences += found
        report.rebuilt[projection.name] = {d.key: rebuilt[d.key] for d in found if d.key in rebuilt}
    for part in checked:
        for name, rows in part.report.rebuilt.items():
            report.rebuilt[name].update(rows)
    kinds: dict[tuple[str, str], set[str]] = {}
    for diff in differences:
        kinds.setdefault((diff.projection, diff.key), set()).add(diff.kind)
    torn = sorted(at for at, found in kinds.items() if len(found) > 1)
    if torn:
        report.again = f"the parts disagree about one row ({' '.join(torn[0])})"
        return
    report.differences = sorted(differences, key=lambda d: (order[d.projection], d.key))


def _by_code_point(column: Any, dialect: Any) -> Any:
    """`column` compared and ordered by code point, as Python compares strings: in the "C"
    collation on PostgreSQL, whatever the database's (SQLite's BINARY is already)."""
    return column.collate("C") if dialect.name == "postgresql" else column


def _unowned(projection: Projection) -> list[Any]:
    """Where the stored rows of `projection` of no participant are (all, with no such column)."""
    if "participant_id" not in projection.columns:
        return []
    return [PROJECTION_TABLES[projection.name].c.participant_id.is_(None)]


def _parts(conn: Connection, shares: Sequence[float]) -> list[_Part]:
    """The stream ids in up to len(`shares`) ranges of about those shares of the events each,
    split at participants' streams in order of id (a participants row's version is its
    stream's events: cut by bot.store.jobs.cut); the streams of no participant fall in the
    last."""
    key, version = participants.c.participant_id, participants.c.version
    rows = conn.execute(select(key, version).order_by(_by_code_point(key, conn.dialect))).all()
    bounds = [rows[end + 1][0] for end in cut([row[1] + 1 for row in rows], shares)]
    edges: list[str | None] = [None, *bounds, None]
    return [_Part(low, high) for low, high in zip(edges, edges[1:], strict=False)]


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
                assert row is not None  # the rebuild holds the row it found missing
                tx.conn.execute(insert(table).values(row))
            elif diff.kind == "changed":
                assert row is not None  # and the row it found changed
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
) -> Stored:
    """The stored rows of a projection by key (`Stored`), fetched in batches (a server-side
    cursor on PostgreSQL)."""
    table = PROJECTION_TABLES[projection.name]
    where = [table.c.participant_id == participant_id] if participant_id is not None else []
    with store.reading() as conn:
        return _read_stored(conn, projection, where)


def _read_stored(conn: Connection, projection: Projection, where: Sequence[Any]) -> Stored:
    table = PROJECTION_TABLES[projection.name]
    at = list(projection.columns).index(projection.key_column)
    found: Stored = {}
    for rows in value_rows(conn, table, projection.columns, where):
        found.update(zip([str(row[at]) for row in rows], rows, strict=True))
    return found


def _current(column: str, stored: Any) -> Any:
    """A stored value as its column's registered fold reads it now (an older version of a
    document upcast), or as it is for a column no fold owns."""
    fold = FOLDS.get(column)
    return stored if fold is None else fold.current(stored)


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
