"""`tandem export`'s work: participants, messages, results (one row per measurement occasion),
retrievals (one row per document retrieved), forms (one row per form field with a value) and
raw events to CSV or JSON Lines, streamed, and
any text files the caller adds (the codebook, bot.interventions.codebook).

Everything is read in batches and written as it is read; the export is bounded by the last event
recorded when it started, so the files describe the same moment. Files are readable by
their owner only (0600), and every export is recorded as `export.written` on the system stream.

Pseudonymised (`pseudonymise=True`): a stable study code (`P-` and 10 hex digits of the SHA-256
of the participant id, itself random) stands for the participant id; phone numbers and names
are left out; free text (message texts and media, profile, notes, judgements, background) is
kept or dropped as `free_text` says (retrieval queries and text answers too); and the raw
events file is not written, because event
payloads carry phone numbers and names.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from operator import attrgetter
from pathlib import Path
from typing import IO, Any, Literal

from sqlalchemy import and_, func, literal, or_, select

from bot.store.event_store import EventStore, opened_row, row_to_event
from bot.store.event_types.exports import ExportWritten
from bot.store.event_types.messages import MessageSent
from bot.store.events import Event, NewEvent, participant_stream
from bot.store.form_results import FORM_COLUMNS, FORM_TYPES, form_rows
from bot.store.results import (
    RESULT_COLUMNS,
    RESULT_TYPES,
    RETRIEVAL_COLUMNS,
    RETRIEVAL_TYPES,
    result_rows,
    retrieval_rows,
)
from bot.store.scan import scan
from bot.store.schema import events, outbox, participants
from bot.store.transcript import LINE_TYPES, TranscriptLine, build, local, zone

Format = Literal["csv", "jsonl"]
FreeText = Literal["keep", "drop"]
SYSTEM_STREAM = "system"
# Columns that name a person, left out of a pseudonymised export.
IDENTIFYING = ("phone_number", "name")
# Columns of free text a participant (or the model) wrote, dropped with free_text="drop".
FREE_TEXT = ("text", "media", "error_message", "profile", "notes", "judgements", "background")
FREE_TEXT += ("query",)
# progress(file name, rows expected or None) -> advance(rows written)
Progress = Callable[[str, int | None], Callable[[int], None]]

PARTICIPANT_COLUMNS = (
    "participant_id", "phone_number", "channel", "status", "opted_out", "timezone",
    "intervention", "conversation_state", "current_step", "name", "gender", "ethnicity",
    "background", "debug", "enrolled_at_utc", "enrolled_at_local", "last_inbound_at_utc",
    "last_inbound_at_local", "updated_at_utc", "version", "profile", "step_counters",
    "judgements", "notes",
)  # fmt: skip
MESSAGE_COLUMNS = (
    "participant_id", "seq", "message_id", "direction", "channel", "kind", "keyword", "text",
    "media", "status", "error_code", "error_message", "segments", "provider_sid", "timezone",
    "created_at_utc", "created_at_local", "sent_at_utc", "sent_at_local", "status_at_utc",
)  # fmt: skip
RESULTS = tuple(column.name for column in RESULT_COLUMNS)
RETRIEVALS = tuple(column.name for column in RETRIEVAL_COLUMNS)
FORMS = tuple(column.name for column in FORM_COLUMNS)
EVENT_COLUMNS = (
    "seq", "event_id", "stream_id", "stream_version", "type", "schema_version", "occurred_at",
    "recorded_at", "idempotency_key", "data", "meta",
)  # fmt: skip


@dataclass
class Counts:
    participants: int = 0
    messages: int = 0
    events: int = 0
    results: int = 0
    retrievals: int = 0
    forms: int = 0


class UnknownParticipant(ValueError):
    """A --participant id that names no participant."""


def parse_since(text: str) -> datetime:
    """An ISO date (midnight UTC) or datetime (UTC unless it carries an offset), aware."""
    value = text.strip()
    try:
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(0), tzinfo=UTC)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an ISO date or datetime (2026-01-31 or 2026-01-31T08:00)"
        ) from None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def export(
    store: EventStore,
    out_dir: Path,
    fmt: Format = "csv",
    *,
    since: datetime | None = None,
    participant_ids: Sequence[str] = (),
    progress: Progress | None = None,
    pseudonymise: bool = False,
    free_text: FreeText = "keep",
    actor: str = "cli",
    documents: Mapping[str, str] | None = None,
) -> Counts:
    """Write participants, messages, results, retrievals and events files into `out_dir`,
    and each of `documents` (file name -> text, e.g. the codebook); returns the row counts."""
    if since is not None and since.tzinfo is None:
        raise ValueError("since must be timezone-aware")
    ids = _existing(store, participant_ids)
    upto = _last_seq(store)
    out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    advance = progress or (lambda _name, _total: lambda _n: None)
    counts = Counts()
    shape = _Shape(pseudonymise, free_text)
    written: list[str] = []
    with _Writer(out_dir, "participants", fmt, shape.columns(PARTICIPANT_COLUMNS)) as out:
        step = advance("participants", len(ids) if ids else _count_participants(store))
        for row in _participants(store, ids):
            out.write(shape.record(participant_record(row)))
            counts.participants += 1
            step(1)
    written.append(out.path.name)
    # The per-participant files, written side by side from one read of each batch of
    # participants' events (see `participant_records`).
    shaped = {"messages": shape.record, "results": shape.result}
    shaped |= {"retrievals": shape.record, "forms": shape.form_value}
    with ExitStack() as files:
        outs, steps = {}, {}
        for name in PER_PARTICIPANT:
            outs[name] = files.enter_context(
                _Writer(out_dir, name, fmt, shape.columns(FILES[name]))
            )
            total = (
                _count_events(store, upto, since, ids, LINE_TYPES) if name == "messages" else None
            )
            steps[name] = advance(name, total)
        for name, record in participant_records(store, PER_PARTICIPANT, ids, upto, since):
            outs[name].write(shaped[name](record))
            setattr(counts, name, getattr(counts, name) + 1)
            steps[name](1)
    written += [outs[name].path.name for name in PER_PARTICIPANT]
    for name, text in (documents or {}).items():
        written.append(_document(out_dir, name, text))
    if not pseudonymise:
        with _Writer(out_dir, "events", fmt, EVENT_COLUMNS) as out:
            step = advance("events", _count_events(store, upto, since, ids))
            for raw in _events(store, upto, since, ids):
                out.write(event_record(raw))
                counts.events += 1
                step(1)
        written.append(out.path.name)
    record = ExportWritten(
        format=fmt,
        files=written,
        pseudonymised=pseudonymise,
        free_text=free_text,
        since=since,
        participant_ids=list(ids),
        participants=counts.participants,
        messages=counts.messages,
        events=counts.events,
    )
    store.append(SYSTEM_STREAM, [NewEvent(record, meta={"actor": actor})])
    return counts


def intervention_slugs(store: EventStore, participant_ids: Sequence[str] = ()) -> list[str]:
    """The interventions the participants (all, or these) are in, for the codebook."""
    query = select(participants.c.intervention).distinct()
    if participant_ids:
        query = query.where(participants.c.participant_id.in_(list(participant_ids)))
    with store.reading() as conn:
        return sorted(str(slug) for (slug,) in conn.execute(query) if slug)


def study_code(participant_id: str) -> str:
    """A participant's stable code in pseudonymised exports."""
    return "P-" + hashlib.sha256(participant_id.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class _Shape:
    """What a pseudonymised export keeps of a record."""

    pseudonymise: bool
    free_text: FreeText

    def columns(self, columns: Sequence[str]) -> tuple[str, ...]:
        if not self.pseudonymise:
            return tuple(columns)
        left_out = IDENTIFYING + (FREE_TEXT if self.free_text == "drop" else ())
        return tuple(
            "study_code" if c == "participant_id" else c for c in columns if c not in left_out
        )

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        if not self.pseudonymise:
            return record
        return {**record, "study_code": study_code(record["participant_id"])}

    def result(self, record: dict[str, Any]) -> dict[str, Any]:
        """A results row: a text answer is free text (its value dropped with free text)."""
        dropped = self.pseudonymise and self.free_text == "drop" and record.get("method") == "text"
        return self.record({**record, "value": None} if dropped else record)

    def form_value(self, record: dict[str, Any]) -> dict[str, Any]:
        """A forms row: a text or list value is free text (dropped with free text)."""
        free = record.get("type") in ("text", "list")
        dropped = self.pseudonymise and self.free_text == "drop" and free
        return self.record({**record, "value": None} if dropped else record)


def _document(out_dir: Path, name: str, text: str) -> str:
    """A text file of the export (owner-only, replaced whole); its name."""
    path = out_dir / name
    partial = path.with_name(name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with open(fd, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(partial, path)
    return name


def participant_record(row: dict[str, Any]) -> dict[str, Any]:
    tz = zone(row["timezone"])
    record = {k: row.get(k) for k in PARTICIPANT_COLUMNS}
    record.update(
        phone_number=row["phone"],
        enrolled_at_utc=row["enrolled_at"],
        enrolled_at_local=local(row["enrolled_at"], tz),
        last_inbound_at_utc=row["last_inbound_at"],
        last_inbound_at_local=local(row["last_inbound_at"], tz),
        updated_at_utc=row["updated_at"],
    )
    return record


# The columns of messages.csv that a transcript line holds as they are, read in one call.
_LINE_COLUMNS = tuple(k for k in MESSAGE_COLUMNS if k in TranscriptLine.__dataclass_fields__)
_line_values = attrgetter(*_LINE_COLUMNS)


def message_record(line: TranscriptLine, tz_name: str) -> dict[str, Any]:
    tz = zone(tz_name)
    return {
        **dict(zip(_LINE_COLUMNS, _line_values(line), strict=True)),
        "media": list(line.media),
        "timezone": tz_name,
        "created_at_utc": line.created_at,
        "created_at_local": local(line.created_at, tz),
        "sent_at_utc": line.sent_at,
        "sent_at_local": local(line.sent_at, tz),
        "status_at_utc": line.status_at,
    }


def event_record(raw: Any) -> dict[str, Any]:
    return {
        "seq": raw.seq,
        "event_id": raw.event_id,
        "stream_id": raw.stream_id,
        "stream_version": raw.stream_version,
        "type": raw.event_type,
        "schema_version": raw.schema_version,
        "occurred_at": raw.occurred_at,
        "recorded_at": raw.recorded_at,
        "idempotency_key": raw.idempotency_key,
        "data": raw.data,
        "meta": raw.meta or {},
    }


class _Writer:
    """Rows to `<name>.<fmt>`, written to a `.partial` file renamed into place at the end."""

    def __init__(self, out_dir: Path, name: str, fmt: Format, columns: Sequence[str]) -> None:
        self.path = out_dir / f"{name}.{fmt}"
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.fmt = fmt
        self.columns = columns
        self.file: IO[str] | None = None
        self.csv: Any = None

    def __enter__(self) -> _Writer:
        # Owner-only from the start: an export holds participants' phone numbers and texts.
        self.partial.unlink(missing_ok=True)
        fd = os.open(self.partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self.file = open(fd, "w", encoding="utf-8", newline="")  # noqa: SIM115
        if self.fmt == "csv":
            self.csv = csv.writer(self.file)
            self.csv.writerow(self.columns)
        return self

    def write(self, record: dict[str, Any]) -> None:
        assert self.file is not None
        if self.fmt == "csv":
            self.csv.writerow(_cells(map(record.get, self.columns)))
        else:
            row = {c: record.get(c) for c in self.columns}
            self.file.write(json.dumps(row, ensure_ascii=False, default=_iso) + "\n")

    def __exit__(self, kind: object, *_rest: object) -> None:
        assert self.file is not None
        self.file.close()
        if kind is None:
            os.replace(self.partial, self.path)
        else:
            self.partial.unlink(missing_ok=True)


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"cannot export a {type(value).__name__}")


# Cells written as they are: most cells of an export (checked first, by exact type).
_AS_IS = frozenset((str, int, float))
# Values the csv module writes as `_cell` would make them (None as an empty cell, numbers
# through str()), so they are handed to it as they are.
_CSV_AS_IS = _AS_IS | {type(None)}


def _cells(values: Iterable[object]) -> list[object]:
    """A CSV row's cells: `_cell` of each value (called only where it changes something)."""
    return [v if type(v) in _CSV_AS_IS else _cell(v) for v in values]


def _cell(value: object) -> object:
    if type(value) in _AS_IS:
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=_iso)
    return value


def _existing(store: EventStore, participant_ids: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys(participant_ids))
    for participant_id in wanted:
        if store.projection_row("participants", participant_id) is None:
            raise UnknownParticipant(f"no participant {participant_id!r}")
    return wanted


def _last_seq(store: EventStore) -> int:
    with store.reading() as conn:
        return int(conn.execute(select(func.coalesce(func.max(events.c.seq), 0))).scalar_one())


def _count_participants(store: EventStore) -> int:
    with store.reading() as conn:
        return int(conn.execute(select(func.count()).select_from(participants)).scalar_one())


def _participants(store: EventStore, ids: Sequence[str], batch: int = 500) -> Iterator[dict]:
    """Participant rows in order of enrollment, `batch` at a time (keyset paging)."""
    for rows in _participant_batches(store, ids, batch):
        yield from rows


def _participant_batches(
    store: EventStore, ids: Sequence[str], batch: int, columns: Sequence[str] = ()
) -> Iterator[list[dict[str, Any]]]:
    """Participant rows (all columns, or these) in order of enrollment, in lists of `batch`
    (keyset paging)."""
    table = participants
    wanted = [table.c[c] for c in dict.fromkeys([*columns, "enrolled_at", "participant_id"])]
    last: tuple[datetime, str] | None = None
    while True:
        query = select(*wanted) if columns else select(table)
        query = query.order_by(table.c.enrolled_at, table.c.participant_id).limit(batch)
        if ids:
            query = query.where(table.c.participant_id.in_(ids))
        if last is not None:
            query = query.where(
                or_(
                    table.c.enrolled_at > last[0],
                    and_(table.c.enrolled_at == last[0], table.c.participant_id > last[1]),
                )
            )
        with store.reading() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        if not rows:
            return
        yield rows
        last = (rows[-1]["enrolled_at"], rows[-1]["participant_id"])


def _event_filter(
    upto: int, since: datetime | None, ids: Sequence[str], types: Sequence[str] = ()
) -> list[Any]:
    clauses: list[Any] = [events.c.seq <= upto]
    if since is not None:
        clauses.append(events.c.occurred_at >= since)
    if ids:
        clauses.append(events.c.stream_id.in_([participant_stream(i) for i in ids]))
    if types:
        clauses.append(events.c.event_type.in_(list(types)))
    return clauses


def _count_events(
    store: EventStore,
    upto: int,
    since: datetime | None,
    ids: Sequence[str],
    types: Sequence[str] = (),
) -> int:
    query = select(func.count()).select_from(events).where(*_event_filter(upto, since, ids, types))
    with store.reading() as conn:
        return int(conn.execute(query).scalar_one())


def _events(
    store: EventStore, upto: int, since: datetime | None, ids: Sequence[str], batch: int = 1000
) -> Iterator[Any]:
    """Raw event rows (undecoded: unknown types export as stored) in global order, streamed
    from one query (a server-side cursor on PostgreSQL), `batch` rows at a time."""
    with store.reading() as conn:
        for row in scan(conn, _event_filter(upto, since, ids), [events.c.seq], batch):
            yield opened_row(row, store.sealer, conn)


FILES = {
    "participants": PARTICIPANT_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "results": RESULTS,
    "retrievals": RETRIEVALS,
    "forms": FORMS,
    "events": EVENT_COLUMNS,
}


def stream_file(
    store: EventStore,
    name: str,
    fmt: Format,
    *,
    since: datetime | None = None,
    actor: str = "cli",
) -> Iterator[str]:
    """One of `export`'s files (`participants`, `messages`, `results`, `retrievals`, `forms`
    or `events`) as text, a row at a time, with the same columns and cells, bounded by the last
    event when it started: for sending over HTTP as it is read (the researcher console's
    downloads). When the stream ends, however it ends (finished, or closed because the client
    went away), it is recorded as `export.written` by `actor`, as `export` records its files,
    with the rows sent in its count (`export.written` counts participants, messages and events
    only; a results, retrievals or forms download counts 0 there and is named in `files`)."""
    upto = _last_seq(store)
    rows = _file_lines(store, name, fmt, since, upto)
    sent = 0
    try:
        for text in rows:
            sent += 1  # handed to the server: counted even if the client goes away now
            yield text
    finally:
        rows.close()
        # (A stream closed before it began runs none of this: nothing was sent.)
        counted = {
            f: (max(sent - (fmt == "csv"), 0) if f == name else 0)
            for f in ("participants", "messages", "events")
        }
        record = ExportWritten(
            format=fmt,
            files=[f"{name}.{fmt}"],
            pseudonymised=False,
            free_text="keep",
            since=since,
            **counted,
        )
        store.append(SYSTEM_STREAM, [NewEvent(record, meta={"actor": actor})])


def _file_lines(
    store: EventStore, name: str, fmt: Format, since: datetime | None, upto: int
) -> Iterator[str]:
    columns = FILES[name]
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(record: dict[str, Any]) -> str:
        if fmt == "jsonl":
            row = {c: record.get(c) for c in columns}
            return json.dumps(row, ensure_ascii=False, default=_iso) + "\n"
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(_cells(map(record.get, columns)))
        return buffer.getvalue()

    if fmt == "csv":
        buffer.seek(0)
        writer.writerow(columns)
        yield buffer.getvalue()
    if name == "participants":
        for row in _participants(store, ()):
            yield line(participant_record(row))
    elif name in PER_PARTICIPANT:
        for _name, record in participant_records(store, (name,), (), upto, since):
            yield line(record)
    else:
        for raw in _events(store, upto, since, ()):
            yield line(event_record(raw))


def _retrieval_rows(history: Any, row: Any, since: Any) -> Any:
    """retrievals.csv's rows of one participant (`retrieval_rows` takes their id)."""
    return retrieval_rows(history, row["participant_id"], since)


# The per-participant analysis files: the event types each is a fold of, and the fold.
ANALYSES: dict[str, tuple[tuple[str, ...], Callable[..., Iterable[dict[str, Any]]]]] = {
    "results": (RESULT_TYPES, result_rows),
    "retrievals": (RETRIEVAL_TYPES, _retrieval_rows),
    "forms": (FORM_TYPES, form_rows),
}
PER_PARTICIPANT = ("messages", *ANALYSES)
# A message line's events: the messages, and `message.sent` for its segment count.
MESSAGE_TYPES = (*LINE_TYPES, MessageSent.event_type)


# What the per-participant files take from the participants row.
_FOLDED_COLUMNS = ("participant_id", "timezone", "intervention")


def participant_records(
    store: EventStore,
    names: Sequence[str],
    ids: Sequence[str],
    upto: int,
    since: datetime | None,
    batch: int = 100,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file name, record) of the per-participant files `names` (`messages`, `results`,
    `retrievals`, `forms`), participant by participant in order of enrollment.

    Each batch of participants is read in one query of their events of the types those files
    fold (walking each stream's index, so the export stays linear in participants) and one of
    their outbox rows; a batch's events are held in memory while its records are made.
    """
    wanted = set(names)
    types: set[str] = set()
    for name in names:
        types.update(MESSAGE_TYPES if name == "messages" else ANALYSES[name][0])
    for rows in _participant_batches(store, ids, batch, _FOLDED_COLUMNS):
        streams = [participant_stream(row["participant_id"]) for row in rows]
        histories = _histories(store, streams, sorted(types), upto)
        sent = _outbox_rows(store, streams) if "messages" in wanted else {}
        for row, stream in zip(rows, streams, strict=True):
            history = histories.get(stream, [])
            if "messages" in wanted:
                for line in build(_message_events(history, since), sent):
                    yield "messages", message_record(line, row["timezone"])
            for name in names:
                if name in ANALYSES:
                    kinds, rows_of = ANALYSES[name]
                    folded = [ev for ev in history if ev.event_type in kinds]
                    for record in rows_of(folded, row, since):
                        yield name, record


def _histories(
    store: EventStore, streams: Sequence[str], types: Sequence[str], upto: int
) -> dict[str, list[Event]]:
    """The streams' events of `types` up to seq `upto`, in order, by stream: one query
    (a server-side cursor on PostgreSQL) through the (stream_id, stream_version) index."""
    where = [
        events.c.stream_id.in_(list(streams)),
        events.c.stream_version > 0,
        # `event_type || ''` keeps the event-type index out of the planner's reach: SQLite
        # took it and, for each batch, scanned every participant's events of those types
        # (quadratic again); the streams' own index is the one to walk.
        (events.c.event_type + literal("")).in_(list(types)),
        events.c.seq <= upto,
    ]
    order = [events.c.stream_id, events.c.stream_version]
    by_stream: dict[str, list[Event]] = {}
    with store.reading() as conn:
        for row in scan(conn, where, order):
            by_stream.setdefault(row.stream_id, []).append(row_to_event(row, store.sealer, conn))
    return by_stream


def _outbox_rows(store: EventStore, streams: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The outbox rows of the streams' messages (status, error, sent time), by outbox id."""
    query = select(outbox).where(outbox.c.stream_id.in_(list(streams)))
    with store.reading() as conn:
        return {row.outbox_id: dict(row._mapping) for row in conn.execute(query)}


def _message_events(history: Sequence[Event], since: datetime | None) -> list[Event]:
    """A participant's message events (from `since`) and every `message.sent`."""
    return [
        ev
        for ev in history
        if ev.event_type == MessageSent.event_type
        or (ev.event_type in LINE_TYPES and (since is None or ev.occurred_at >= since))
    ]
