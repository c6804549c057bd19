"""`tandem export`'s work: participants (with their lifecycle and allocation:
bot.reporting.lifecycle), allocations (one row per allocation to a study's arm), messages,
results (one row per measurement occasion), retrievals (one row per document retrieved), forms
(one row per form field with a value) and raw events to CSV or JSON Lines, streamed, and
any text files the caller adds (the codebook, bot.reporting.codebook, whose files and columns
it sets to those written: `with_files`).

Everything is read in batches and written as it is read, all in one snapshot of the database
(`EventStore.snapshot`: REPEATABLE READ on PostgreSQL) and bounded by the last event recorded in
it, so the files describe the same moment: an enrollment, message or delivery report recorded
while an export runs is in none of its files. With `jobs`, worker processes write the
per-participant files in parts, in the same snapshot (bot.store.jobs). Files are
readable by their owner only (0600), and every export is recorded as `export.written` on the
system stream.

Pseudonymised (`pseudonymise=True`): a stable study code (`P-` and 10 hex digits of the SHA-256
of the participant id, itself random) stands for the participant id; phone numbers, names,
message ids and provider ids are left out; free text (message texts and media, profile, notes,
judgements, background, reasons) is dropped as `free_text` says (retrieval queries and text
answers too) or kept with each participant's names, phone numbers and e-mail addresses
redacted (bot.reporting.redact); and the raw events file is not written, because event
payloads carry phone numbers and names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time
from functools import partial
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Connection, and_, func, literal, or_, select

from bot.reporting.arm_mask import NAMES, ArmMask
from bot.reporting.cells import (
    FORMULA_START,
    NEEDS_QUOTES,
    Format,
    Writer,
    csv_line,
    document,
    iso,
    json_line,
    part_name,
    to_json,
)
from bot.reporting.codebook import checklist_names, decision_names, question_options, with_files
from bot.reporting.columns import (
    ALLOCATION_FILE,
    BROADCAST_FILE,
    EVENT_FILE,
    PARTICIPANT_FILE,
)
from bot.reporting.decision_file import (
    DECISION_FIXED,
    DECISION_TYPES,
    decision_columns,
    decision_file_rows,
    with_undeclared,
)
from bot.reporting.evaluation_rows import (
    EVALUATION_FIXED,
    EVALUATION_TYPES,
    evaluation_columns,
    evaluation_rows,
)
from bot.reporting.form_results import FORM_COLUMNS, FORM_TYPES, form_rows
from bot.reporting.instrument_rows import INSTRUMENT_COLUMNS, INSTRUMENT_TYPES, instrument_rows
from bot.reporting.lifecycle import (
    Lifecycle,
    allocation_records,
    arms,
    baseline_names,
    lifecycle_cells,
    lifecycles,
    time_cells,
)
from bot.reporting.merge import SortedRuns
from bot.reporting.messages import (
    MESSAGE_COLUMNS,
    MESSAGE_TYPES,
    message_lines,
    message_records,
)
from bot.reporting.redact import Redactor
from bot.reporting.results import (
    RESULT_COLUMNS,
    RESULT_TYPES,
    RETRIEVAL_COLUMNS,
    RETRIEVAL_TYPES,
    coded,
    result_rows,
    retrieval_rows,
)
from bot.reporting.transcript import LINE_TYPES, zone
from bot.store.bulk_gc import fewer_collections
from bot.store.event_store import EventStore
from bot.store.event_types.exports import ExportWritten
from bot.store.events import PARTICIPANT_PREFIX, NewEvent, participant_of, participant_stream
from bot.store.jobs import (
    Report,
    Workers,
    chunk_shares,
    count_participants,
    cut,
    last_seq,
    process_count,
)
from bot.store.prefetch import ahead
from bot.store.reads.broadcasts import recipient_rows_on, recipient_state
from bot.store.scan import batches, records, scan_query, value_rows
from bot.store.schema import events, outbox, participants
from bot.store.sealing import Sealer
from bot.store.stored_rows import opened_raw, opened_scanned, row_to_event

FreeText = Literal["keep", "drop"]
SYSTEM_STREAM = "system"
# Columns that name a person or a provider's message, left out of a pseudonymised export.
IDENTIFYING = ("phone_number", "name", "message_id", "provider_sid")
# Columns of free text a participant (or the model) wrote, dropped with free_text="drop".
FREE_TEXT: tuple[str, ...]
FREE_TEXT = ("text", "media", "error_message", "profile", "notes", "judgements", "background")
FREE_TEXT += ("query", "withdrawn_reason", "erased_reason", "comment")
# progress(file name, rows expected or None) -> advance(rows written)
Progress = Callable[[str, int | None], Callable[[int], object]]

# participants.csv's columns before each baseline field's (`baseline_<name>`)
PARTICIPANT_COLUMNS = tuple(column.name for column in PARTICIPANT_FILE)
# allocations.csv's columns but for each arm's probabilities (`p_<arm>`, `conditional_p_<arm>`)
ALLOCATION_COLUMNS = tuple(column.name for column in ALLOCATION_FILE)
RESULTS = tuple(column.name for column in RESULT_COLUMNS)
RETRIEVALS = tuple(column.name for column in RETRIEVAL_COLUMNS)
FORMS = tuple(column.name for column in FORM_COLUMNS)
INSTRUMENTS = tuple(column.name for column in INSTRUMENT_COLUMNS)
EVENT_COLUMNS = tuple(column.name for column in EVENT_FILE)
BROADCAST_COLUMNS = tuple(column.name for column in BROADCAST_FILE)


@dataclass
class Counts:
    participants: int = 0
    messages: int = 0
    events: int = 0
    results: int = 0
    retrievals: int = 0
    forms: int = 0
    instruments: int = 0
    allocations: int = 0
    decisions: int = 0
    broadcasts: int = 0
    evaluations: int = 0
    workers: int = 0  # worker processes that wrote chunks with this one (bot.store.jobs)


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
    jobs: int = 1,
    arms: ArmMask = NAMES,
) -> Counts:
    """Write participants, messages, results, retrievals and events files into `out_dir`,
    and each of `documents` (file name -> text, e.g. the codebook); returns the row counts.
    With `jobs` above 1 and no `participant_ids`, up to that many worker processes write the
    per-participant files in parts (bot.store.jobs): the same files, sooner. `arms`: how a
    blinded study's arms are shown (bot.reporting.arm_mask; by name unless given)."""
    if since is not None and since.tzinfo is None:
        raise ValueError("since must be timezone-aware")
    if jobs < 1:
        raise ValueError(f"jobs must be 1 or more, not {jobs}")
    given = documents or {}
    shape = _Shape(pseudonymise, free_text, question_options(given), decision_names(given))
    shape = replace(shape, checks=checklist_names(given))
    advance = progress or (lambda _name, _total: lambda _n: None)
    counts = Counts()
    processes = 0 if participant_ids else _process_count(store, jobs)
    # every file as of one moment; events.csv's lines made as the per-participant files read
    # each event, sorted back into global order (bot.reporting.merge); the cyclic collector
    # running rarely (bot.store.bulk_gc); the workers forked before any transaction begins
    failed = partial(_remove_parts, out_dir, fmt)  # once the workers have ended
    with (
        fewer_collections(),
        Workers(store, max(processes - 1, 0), _write_part, failed) as parts,
        ExitStack() as hold,
    ):
        hold.enter_context(parts.hold_writes())  # SQLite: until the workers share the snapshot
        with store.snapshot() as conn, SortedRuns(out_dir) as runs:
            ids = _existing(conn, participant_ids)
            upto = last_seq(conn)
            shape = replace(shape, arms=arms.with_participants(_studies(conn, ids)))
            events_file = not pseudonymise and shape.arms.writes("events")
            out_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            reads = _Reads(conn, store.sealer, upto, since, ids)
            chunks: list[_Part] = []
            if processes:
                lines = events_file
                shares = chunk_shares(processes, count_participants(conn), PART_PARTICIPANTS)
                spans = enumerate(_spans(conn, shares))
                chunks = [_Part(n, s, out_dir, fmt, shape, since, upto, lines) for n, s in spans]
                parts.begin(conn, upto, chunks)
                counts.workers = parts.count
            hold.close()
            found = lifecycles(conn, store.sealer, upto, ids)  # once the workers have begun
            zones: dict[str, str] = {}  # each participant's time zone, for allocations.csv
            written = [
                _write_participants(reads, out_dir, fmt, shape, advance, counts, found, zones)
            ]
            if shape.arms.writes("allocations"):
                written.append(_write_allocations(out_dir, fmt, shape, counts, found, zones))
            written.append(_write_broadcasts(reads, out_dir, fmt, shape, counts))
            total = 0  # the events file's lines
            if events_file:  # its count and the lines of no participant's events, now:
                # with workers, while they begin (not after them, when this process works alone)
                _add_other_lines(reads, fmt, runs, shape.arms)
                total = _count_events(conn, upto, since, ids)
            if chunks:
                written += _join_parts(parts, chunks, reads, advance, counts, runs)
            else:
                every_line = _event_lines(fmt, since, runs, shape.arms) if events_file else None
                written += _write_per_participant(
                    reads, out_dir, fmt, shape, advance, counts, every_line
                )
            books = _described(documents or {}, fmt, shape, found)
            for name, text in books.items():
                written.append(document(out_dir, name, text))
            if events_file:
                written.append(_write_events(out_dir, fmt, advance, counts, runs, total))
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
        arms=arms.shown,
    )
    store.append(SYSTEM_STREAM, [NewEvent(record, meta={"actor": actor})])
    return counts


@dataclass(frozen=True)
class _Reads:
    """What an export's files are read from: one snapshot's connection, the sealer that opens
    personal fields, and the bounds (events up to `upto`, those from `since`, of `ids`)."""

    conn: Connection
    sealer: Sealer
    upto: int
    since: datetime | None
    ids: Sequence[str]


def _write_participants(
    reads: _Reads,
    out_dir: Path,
    fmt: Format,
    shape: _Shape,
    advance: Progress,
    counts: Counts,
    found: Mapping[str, Lifecycle],
    zones: dict[str, str],
) -> str:
    """participants.csv, with each one's lifecycle and allocation (`found`); `zones` takes
    each participant's time zone (allocations.csv's local times)."""
    conn, ids = reads.conn, reads.ids
    columns = participant_columns(found)
    with Writer(out_dir, "participants", fmt, shape.columns(columns)) as out:
        step = advance("participants", len(ids) if ids else count_participants(conn))
        for row in _participants(conn, ids):
            record = participant_record(row, found.get(row["participant_id"]))
            zones[row["participant_id"]] = row["timezone"]
            if shape.pseudonymise:
                record = Redactor.of(row).record("participants", record)
            out.write(shape.record(record))
            counts.participants += 1
            step(1)
    return out.path.name


def _write_allocations(
    out_dir: Path,
    fmt: Format,
    shape: _Shape,
    counts: Counts,
    found: Mapping[str, Lifecycle],
    zones: Mapping[str, str],
) -> str:
    """allocations.csv: each allocation of the participants exported, in the order made."""
    with Writer(out_dir, "allocations", fmt, shape.columns(allocation_columns(found))) as out:
        for record in allocation_records(found, zones):
            out.write(shape.record(record))
            counts.allocations += 1
    return out.path.name


def _write_broadcasts(
    reads: _Reads, out_dir: Path, fmt: Format, shape: _Shape, counts: Counts
) -> str:
    """broadcasts.csv: each recipient of each broadcast, in the order broadcasts were made."""
    with Writer(out_dir, "broadcasts", fmt, shape.columns(BROADCAST_COLUMNS)) as out:
        for row in recipient_rows_on(reads.conn, participant_ids=reads.ids):
            cancelled = row["broadcast_status"] == "cancelled"
            state = recipient_state(row["status"], row["outbox_status"], cancelled)
            suppressed = row["outbox_status"] == "suppressed"
            record = {
                "broadcast_id": row["broadcast_id"],
                "participant_id": row["participant_id"],
                "status": state,
                "reason": row["reason"] or (row["outbox_error"] if suppressed else None),
                "message_id": row["outbox_id"],
                "due_at_utc": _utc(row["due_at"]),
                "sent_at_utc": _utc(row["sent_at"]) if state == "sent" else None,
            }
            out.write(shape.record(record))
            counts.broadcasts += 1
    return out.path.name


def _utc(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat() if moment else None


def participant_columns(found: Mapping[str, Lifecycle]) -> tuple[str, ...]:
    """participants.csv's columns: PARTICIPANT_COLUMNS, then each baseline field's."""
    return (*PARTICIPANT_COLUMNS, *(f"baseline_{n}" for n in baseline_names(found)))


def allocation_columns(found: Mapping[str, Lifecycle]) -> tuple[str, ...]:
    """allocations.csv's columns: each arm's probabilities after the allocation's place."""
    named = arms(found)
    at = ALLOCATION_COLUMNS.index("timezone")
    per_arm = (*(f"p_{a}" for a in named), *(f"conditional_p_{a}" for a in named))
    return (*ALLOCATION_COLUMNS[:at], *per_arm, *ALLOCATION_COLUMNS[at:])


def _described(
    documents: Mapping[str, str], fmt: Format, shape: _Shape, found: Mapping[str, Lifecycle]
) -> dict[str, str]:
    """`documents` with the codebook's files (codebook.json's and .md's) as written: each
    file's columns, as this export's shape writes them."""
    files = {
        "participants": shape.columns(participant_columns(found)),
        "allocations": shape.columns(allocation_columns(found)),
        "broadcasts": shape.columns(BROADCAST_COLUMNS),
        **{name: shape.file_columns(name) for name in PER_PARTICIPANT},
    }
    if not shape.pseudonymise:
        files["events"] = EVENT_COLUMNS
    return with_files(documents, {f"{name}.{fmt}": columns for name, columns in files.items()})


def _write_per_participant(
    reads: _Reads,
    out_dir: Path,
    fmt: Format,
    shape: _Shape,
    advance: Progress,
    counts: Counts,
    every: Callable[[Any], None] | None,
) -> list[str]:
    """The per-participant files, written side by side from one read of each batch of
    participants' events (see `participant_records`), which hands `every` each event of
    their streams it reads."""
    conn, upto, since, ids = reads.conn, reads.upto, reads.since, reads.ids
    with ExitStack() as files:
        outs = {
            name: files.enter_context(Writer(out_dir, name, fmt, shape.file_columns(name)))
            for name in PER_PARTICIPANT
        }
        records = participant_records(
            conn, reads.sealer, PER_PARTICIPANT, ids, upto, since, every=every, read_ahead=True,
            csv_messages=_csv_messages(fmt, shape), redact=shape.pseudonymise,
        )  # fmt: skip
        _write_records(records, _writes(outs, fmt, shape), _counted(reads, advance, counts))
    return [outs[name].path.name for name in PER_PARTICIPANT]


def _write_records(
    records: Iterable[tuple[str, Any]],
    writes: Mapping[str, Callable[[Any], None]],
    report: Report,
) -> None:
    """Each (file name, record or row) to its file's `writes`; the rows written of each file
    reported every _REPORT_EVERY rows, and at the end."""
    done = dict.fromkeys(writes, 0)
    for written, (name, record) in enumerate(records, 1):
        writes[name](record)
        done[name] += 1
        if written % _REPORT_EVERY == 0:
            report(done)
            done = dict.fromkeys(writes, 0)
    report(done)


def _counted(reads: _Reads, advance: Progress, counts: Counts) -> Report:
    """What takes reports of the per-participant rows written (`_write_records`, from this
    process or from the workers): added to `counts` and to each file's progress (messages.*
    out of the messages to write)."""
    messages = _count_events(reads.conn, reads.upto, reads.since, reads.ids, LINE_TYPES)
    steps = {
        name: advance(name, messages if name == "messages" else None) for name in PER_PARTICIPANT
    }

    def report(done: dict[str, int]) -> None:
        for name, rows in done.items():
            if rows:
                setattr(counts, name, getattr(counts, name) + rows)
                steps[name](rows)

    return report


def _csv_messages(fmt: Format, shape: _Shape) -> bool:
    """Whether messages.csv's rows are made as text (`message_lines`): CSV with every column,
    not pseudonymised."""
    return fmt == "csv" and not shape.pseudonymise


def _writes(outs: Mapping[str, Writer], fmt: Format, shape: _Shape) -> dict[str, Callable]:
    """What writes each per-participant file's records (as the shape keeps them), or, for
    messages.csv made as text (`_csv_messages`), its rows."""
    shaped = {"messages": shape.record, "results": shape.result}
    shaped |= {"retrievals": shape.record, "forms": shape.form_value}
    shaped |= {"decisions": shape.decision}
    shaped |= {"instruments": shape.record, "evaluations": shape.record}
    writes: dict[str, Callable] = {
        name: (lambda record, out=out, keep=shaped[name]: out.write(keep(record)))
        for name, out in outs.items()
    }
    if _csv_messages(fmt, shape):
        writes["messages"] = outs["messages"].write_line
    return writes


# Each process of an export in parts (bot.store.jobs) has at least this many participants:
# fewer, and forking a worker costs more than it saves. Its chunks hold at least half as many.
PART_PARTICIPANTS = 200
# How many rows are written between two reports of progress (`_write_records`).
_REPORT_EVERY = 1000


def _process_count(store: EventStore, jobs: int) -> int:
    """How many processes an export of every participant runs in (its own and the workers it
    forks): 0 (one, no workers) unless `jobs` allows 2 or more of PART_PARTICIPANTS each."""
    if jobs < 2:
        return 0
    with store.reading() as conn:  # ended before the workers are forked
        count = count_participants(conn)
    return process_count(jobs, count, PART_PARTICIPANTS, "export")


def _spans(conn: Connection, shares: Sequence[float]) -> list[Span]:
    """The participants, in order of enrollment, in up to len(`shares`) spans of about those
    shares of the events each (a participants row's version is its stream's events: cut by
    bot.store.jobs.cut). Read as `value_rows` reads them, not by a typed select, which
    converts each enrolled_at through SQLAlchemy's costlier chain, while the workers wait
    for their chunks."""
    order = [participants.c.enrolled_at, participants.c.participant_id]
    columns = ("enrolled_at", "participant_id", "version")
    rows = [row for rows in value_rows(conn, participants, columns, order_by=order) for row in rows]
    ends = [*cut([row[2] + 1 for row in rows], shares), len(rows) - 1]
    places = [(rows[end][0], rows[end][1]) for end in ends]
    return list(zip([None, *places], places, strict=False))


@dataclass(frozen=True)
class _Part:
    """A chunk of an export in parts (bot.store.jobs), written by whichever process takes it:
    the per-participant files' rows of the participants in `span` (part `index` of each
    file), and (`events`) their events file lines."""

    index: int
    span: Span
    out_dir: Path
    fmt: Format
    shape: _Shape
    since: datetime | None
    upto: int
    events: bool


def _write_part(store: EventStore, conn: Connection, part: _Part, report: Report) -> list[Path]:
    """In a worker process: `_write_span`, its events lines written to run files of its own,
    which it returns, handed over."""
    with SortedRuns(part.out_dir, prefix=f"part-{part.index}-") as runs:
        _write_span(conn, store.sealer, part, report, runs)
        return runs.hand_over()


def _write_span(
    conn: Connection, sealer: Sealer, part: _Part, report: Report, runs: SortedRuns
) -> None:
    """A chunk's part of each per-participant file (`Writer`'s `part`), as
    `_write_per_participant` writes the whole, reporting the rows written as it goes; its
    events lines to `runs`."""
    with ExitStack() as files:
        outs = {
            name: files.enter_context(
                Writer(part.out_dir, name, part.fmt, part.shape.file_columns(name), part.index)
            )
            for name in PER_PARTICIPANT
        }
        every = _event_lines(part.fmt, part.since, runs, part.shape.arms) if part.events else None
        records = participant_records(
            conn, sealer, PER_PARTICIPANT, (), part.upto, part.since,
            every=every, read_ahead=True, span=part.span,
            csv_messages=_csv_messages(part.fmt, part.shape), redact=part.shape.pseudonymise,
        )  # fmt: skip
        _write_records(records, _writes(outs, part.fmt, part.shape), report)


def _join_parts(
    parts: Workers,
    chunks: Sequence[_Part],
    reads: _Reads,
    advance: Progress,
    counts: Counts,
    runs: SortedRuns,
) -> list[str]:
    """The per-participant files, in `chunks` that this process and the workers take in turn
    (bot.store.jobs), joined in order once all are written (and removed); the workers'
    events lines, as runs, taken by `runs`, this process's added to it. What a failure leaves
    is removed as the workers end (`_remove_parts`)."""
    counted = _counted(reads, advance, counts)

    def adopt(_index: int, handed: list[Path]) -> None:
        runs.adopt(handed)

    def report(done: dict[str, int]) -> None:
        counted(done)
        parts.poll(counted, adopt)  # no worker waits to send while this one writes

    for _index, chunk in parts.claimed():
        _write_span(reads.conn, reads.sealer, chunk, report, runs)
    parts.results(counted, adopt)
    first = chunks[0]
    for name in PER_PARTICIPANT:
        columns = first.shape.file_columns(name)
        with Writer(first.out_dir, name, first.fmt, columns) as out:
            for chunk in chunks:
                part = first.out_dir / part_name(name, first.fmt, chunk.index)
                out.append(part)
                part.unlink()
    return [f"{name}.{first.fmt}" for name in PER_PARTICIPANT]


def _remove_parts(out_dir: Path, fmt: Format) -> None:
    """What an export in parts may have left in `out_dir` when it fails: the parts, written
    or partial, and the runs of any process."""
    for name in PER_PARTICIPANT:
        for part in out_dir.glob(f".{name}.{fmt}.part-*"):
            part.unlink(missing_ok=True)
    for run in out_dir.glob(".events-run-part-*"):
        run.unlink(missing_ok=True)


def _event_lines(
    fmt: Format, since: datetime | None, runs: SortedRuns, arms: ArmMask = NAMES
) -> Callable[[Any], None]:
    """What takes each event row the per-participant files read: its events file line (if it
    is from `since`) to `runs`, with a blinded study's arms masked (`arms`)."""
    text = _event_text(fmt)
    add = runs.add
    masked = arms.event if arms.hidden else None

    def keep(raw: Any) -> None:
        if since is None or raw.occurred_at >= since:
            add(raw.seq, text(masked(raw) if masked else raw))

    return keep


def _event_text(fmt: Format) -> Callable[[Any], str]:
    """An event row's line of the events file."""
    if fmt == "csv":
        return event_line
    return lambda raw: json_line(EVENT_COLUMNS, event_record(raw))


def _add_other_lines(reads: _Reads, fmt: Format, runs: SortedRuns, arms: ArmMask) -> None:
    """The events file's lines of the events of no participant exported (the system's, and a
    stream without a participants row; none with `ids`), added to `runs`; a broadcast's arm
    masked as `arms` says."""
    if not reads.ids:
        text = _event_text(fmt)
        for raw in _other_events(reads.conn, reads.sealer, reads.upto, reads.since):
            runs.add(raw.seq, text(arms.event(raw) if arms.hidden else raw))


def _write_events(
    out_dir: Path, fmt: Format, advance: Progress, counts: Counts, runs: SortedRuns, total: int
) -> str:
    """The events file: the lines `runs` took (the participants' events, as the
    per-participant files read them, and those of `_add_other_lines`), `total` of them, merged in
    order of seq."""
    with Writer(out_dir, "events", fmt, EVENT_COLUMNS) as out:
        step = advance("events", total)
        for block in runs.merged():
            out.write_encoded(b"".join(block))
            counts.events += len(block)
            step(len(block))
    return out.path.name


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
    # intervention -> question -> its options, in order (a choice answer's code: `coded`)
    options: Mapping[str, Mapping[str, Sequence[str]]] = field(default_factory=dict)
    # decisions.csv's per-decision columns (`p_<option>`, `mod_<name>`): codebook.decision_names
    decided: Sequence[str] = ()
    arms: ArmMask = NAMES  # how a blinded study's arms are shown (bot.reporting.arm_mask)
    # evaluations.csv's `check_<key>` columns: codebook.checklist_names
    checks: Sequence[str] = ()

    def file_columns(self, name: str) -> tuple[str, ...]:
        """A per-participant file's columns as this shape writes them (decisions.csv's with
        each option's and moderator's)."""
        if name == "decisions":
            return self.columns(decision_columns(self.decided))
        if name == "evaluations":
            return self.columns(evaluation_columns(self.checks))
        return self.columns(FILES[name])

    def decision(self, record: dict[str, Any]) -> dict[str, Any]:
        """A decisions row: probabilities and moderators without a column in `undeclared`."""
        return self.record(with_undeclared(record, self.decided))

    def columns(self, columns: Sequence[str]) -> tuple[str, ...]:
        columns = self.arms.columns(columns)
        if not self.pseudonymise:
            return tuple(columns)
        left_out = IDENTIFYING + (FREE_TEXT if self.free_text == "drop" else ())
        return tuple(
            "study_code" if c == "participant_id" else c for c in columns if c not in left_out
        )

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        if self.arms.hidden:
            record = self.arms.record(record)
        if not self.pseudonymise:
            return record
        return {**record, "study_code": study_code(record["participant_id"])}

    def result(self, record: dict[str, Any]) -> dict[str, Any]:
        """A results row: a text answer is free text (its value dropped with free text)."""
        dropped = self.pseudonymise and self.free_text == "drop" and record.get("method") == "text"
        record = coded(record, self.options.get(record.get("intervention") or "", {}))
        return self.record({**record, "value": None} if dropped else record)

    def form_value(self, record: dict[str, Any]) -> dict[str, Any]:
        """A forms row: a text or list value is free text (dropped with free text)."""
        free = record.get("type") in ("text", "list")
        dropped = self.pseudonymise and self.free_text == "drop" and free
        return self.record({**record, "value": None} if dropped else record)


# What `participant_record` reads of a participants row.
_RECORD_COLUMNS = tuple(c for c in PARTICIPANT_COLUMNS if c in participants.c)
_RECORD_COLUMNS += ("phone", "enrolled_at", "last_inbound_at", "updated_at")


def participant_record(row: dict[str, Any], facts: Lifecycle | None = None) -> dict[str, Any]:
    """participants.csv's record of a participants row, with their lifecycle and allocation
    (`facts`; none: none happened)."""
    tz = zone(row["timezone"])
    record = {k: row.get(k) for k in PARTICIPANT_COLUMNS}
    record.update(
        phone_number=row["phone"],
        **time_cells("enrolled_at", row["enrolled_at"], tz),
        **time_cells("last_inbound_at", row["last_inbound_at"], tz),
        updated_at_utc=row["updated_at"],
    )
    if facts is not None:
        record.update(lifecycle_cells(facts, tz))
    return record


def event_values(raw: Any) -> tuple[Any, ...]:
    """An events row's values in EVENT_COLUMNS order."""
    return (
        raw.seq,
        raw.event_id,
        raw.stream_id,
        raw.stream_version,
        raw.event_type,
        raw.schema_version,
        raw.occurred_at,
        raw.recorded_at,
        raw.idempotency_key,
        raw.data,
        raw.meta or {},
    )


def event_line(raw: Any) -> str:
    """events.csv's row of an event row: `csv_line(event_values(raw))`, written directly.
    Its text columns are searched for quotes once, and the idempotency key's first character
    for a formula's (`defused` by `csv_line`); a payload or meta that is a non-empty
    object always holds quotes (its keys), so it is always quoted; any other row (a payload
    that is not an object, text that needs quotes) goes through `csv_line`."""
    data, meta, key = raw.data, raw.meta or {}, raw.idempotency_key or ""
    eid, sid, kind = raw.event_id, raw.stream_id, raw.event_type
    occurred, recorded = raw.occurred_at, raw.recorded_at
    if (
        type(data) is not dict
        or type(meta) is not dict
        or type(key) is not str
        or type(occurred) is not datetime
        or type(recorded) is not datetime
        or NEEDS_QUOTES(eid + sid + kind + key) is not None
        or key[:1] in FORMULA_START  # a client's text; ids, streams and types are the system's
    ):
        return csv_line(event_values(raw))
    return (
        f"{raw.seq},{eid},{sid},{raw.stream_version},{kind},{raw.schema_version},"
        f"{iso(occurred)},{iso(recorded)},{key},{_object_cell(data)},"
        f"{_object_cell(meta)}\r\n"
    )


def _object_cell(value: dict[str, Any]) -> str:
    """A JSON object's cell: `{}`, or its JSON in quotes (an object's keys hold quotes)."""
    if not value:
        return "{}"
    return '"' + to_json(value).replace('"', '""') + '"'


def event_record(raw: Any) -> dict[str, Any]:
    return dict(zip(EVENT_COLUMNS, event_values(raw), strict=True))


def _studies(conn: Connection, ids: Sequence[str]) -> list[tuple[str, str | None]]:
    """Each participant in a study (of `ids`, or all): their id and study (the arm mask's)."""
    query = select(participants.c.participant_id, participants.c.study).where(
        participants.c.study.is_not(None)
    )
    if ids:
        query = query.where(participants.c.participant_id.in_(list(ids)))
    return [(row[0], row[1]) for row in conn.execute(query)]


def _existing(conn: Connection, participant_ids: Sequence[str]) -> list[str]:
    wanted = list(dict.fromkeys(participant_ids))
    key = participants.c.participant_id
    found = set(conn.execute(select(key).where(key.in_(wanted))).scalars()) if wanted else set()
    for participant_id in wanted:
        if participant_id not in found:
            raise UnknownParticipant(f"no participant {participant_id!r}")
    return wanted


def _participants(conn: Connection, ids: Sequence[str], batch: int = 500) -> Iterator[dict]:
    """participants.csv's participant rows (the columns `participant_record` reads: not the
    conversation memory or forms, which it does not write) in order of enrollment, fetched
    `batch` at a time."""
    for rows in _participant_batches(conn, ids, batch, _RECORD_COLUMNS):
        yield from rows


# Where a participant is in order of enrollment: (enrolled_at, participant_id).
Place = tuple[datetime, str]
# A part of the participants in order of enrollment (bot.store.jobs): those after the
# first place (None: from the first participant) up to the second, inclusive.
Span = tuple[Place | None, Place]


def in_span(span: Span | None) -> list[Any]:
    """The WHERE clauses of the participants rows in `span` (none without one)."""
    if span is None:
        return []
    at, key = participants.c.enrolled_at, participants.c.participant_id
    after, last = span
    clauses = [or_(at < last[0], and_(at == last[0], key <= last[1]))]
    if after is not None:
        clauses.append(or_(at > after[0], and_(at == after[0], key > after[1])))
    return clauses


def _participant_batches(
    conn: Connection,
    ids: Sequence[str],
    batch: int,
    columns: Sequence[str],
    span: Span | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Participant rows (these columns; of `ids`, or in `span`) in order of enrollment, in
    lists of `batch`: one query, sorted once and streamed (a server-side cursor on
    PostgreSQL). No index holds that order, so paging it (a LIMIT per page after the last
    row) sorted every participant for every page: quadratic. Each value converted column by
    column (bot.store.scan's `records`), not by a typed select, which costs more a value."""
    key = participants.c.participant_id
    names = list(dict.fromkeys([*columns, "enrolled_at", "participant_id"]))
    where = [*in_span(span), key.in_(ids)] if ids else in_span(span)
    order = [participants.c.enrolled_at, key]
    # a download cut short closes the cursor now (records' own)
    yield from records(conn, participants, names, where, batch, order_by=order)


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
    conn: Connection,
    upto: int,
    since: datetime | None,
    ids: Sequence[str],
    types: Sequence[str] = (),
) -> int:
    clauses = _event_filter(upto, since, ids, types)
    if conn.dialect.name == "sqlite" and len(clauses) == 1:
        # every event up to `upto`: counted through SQLite's smallest index that holds the
        # rowid (every index does) when the bound is on an expression of it, not through the
        # table's own b-tree, rows and all, as it is when the bound is on the rowid itself
        clauses = [events.c.seq + 0 <= upto]
    query = select(func.count()).select_from(events).where(*clauses)
    return int(conn.execute(query).scalar_one())


def _events(
    conn: Connection,
    sealer: Sealer,
    upto: int,
    since: datetime | None,
    ids: Sequence[str],
    batch: int = 1000,
) -> Iterator[Any]:
    """Raw event rows (undecoded: unknown types export as stored) in global order, streamed
    from one query (a server-side cursor on PostgreSQL), `batch` rows at a time."""
    yield from opened_scanned(conn, _event_filter(upto, since, ids), [events.c.seq], sealer, batch)


def _other_events(
    conn: Connection, sealer: Sealer, upto: int, since: datetime | None, batch: int = 1000
) -> Iterator[Any]:
    """`_events` of the streams that are no participants row's (`participant_records`
    reads those), in global order within each `_OTHER_STREAMS` of them: the streams found
    first (`_other_streams`), then their events read through the streams' index. (One scan of
    the events table, each row's stream looked up in participants' primary key, read every
    event to find the few.)"""
    others = _other_streams(conn)
    for start in range(0, len(others), _OTHER_STREAMS):
        where = [
            *_event_filter(upto, since, ()),
            events.c.stream_id.in_(others[start : start + _OTHER_STREAMS]),
        ]
        yield from opened_scanned(conn, where, [events.c.seq], sealer, batch)


# The most streams one query of `_other_events` names (the streams of no participants row
# are few in a study, but nothing bounds them, and a statement's parameters are bounded).
_OTHER_STREAMS = 500


def _other_streams(conn: Connection) -> list[str]:
    """The streams of the events table that are no participants row's (the system's, and a
    stream named for a participant with no row): its distinct streams, read from the streams'
    index alone, each looked up in participants' primary key."""
    pid = participants.c.participant_id
    streams = select(events.c.stream_id.label("stream_id")).distinct().subquery()
    stream = streams.c.stream_id
    known = select(literal(1)).where(
        pid == func.substr(stream, len(PARTICIPANT_PREFIX) + 1),
        stream == literal(PARTICIPANT_PREFIX) + pid,
    )
    return list(conn.execute(select(stream).where(~known.exists()).order_by(stream)).scalars())


FILES = {
    "participants": PARTICIPANT_COLUMNS,
    "allocations": ALLOCATION_COLUMNS,
    "messages": MESSAGE_COLUMNS,
    "results": RESULTS,
    "retrievals": RETRIEVALS,
    "forms": FORMS,
    "decisions": DECISION_FIXED,
    "instruments": INSTRUMENTS,
    "evaluations": EVALUATION_FIXED,
    "events": EVENT_COLUMNS,
}


def stream_file(
    store: EventStore,
    name: str,
    fmt: Format,
    *,
    since: datetime | None = None,
    actor: str = "cli",
    decided: Sequence[str] = (),
    arms: ArmMask = NAMES,
    checks: Sequence[str] = (),
) -> Iterator[str]:
    """One of `export`'s files (`participants`, `messages`, `results`, `retrievals`, `forms`,
    `decisions`, with its per-decision columns `decided`: codebook.decision_names,
    `evaluations`, with its `check_<key>` columns `checks`: codebook.checklist_names, or
    `events`) as text, a row at a time, with the same columns and cells, bounded by the last
    event when it started: for sending over HTTP as it is read (the researcher console's
    downloads). When the stream ends, however it ends (finished, or closed because the client
    went away), it is recorded as `export.written` by `actor`, as `export` records its files,
    with the rows sent in its count (`export.written` counts participants, messages and events
    only; a results, retrievals or forms download counts 0 there and is named in `files`)."""
    rows = _file_lines(store, name, fmt, since, decided, arms, checks)
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
            arms=arms.shown,
            **counted,
        )
        store.append(SYSTEM_STREAM, [NewEvent(record, meta={"actor": actor})])


def _file_lines(
    store: EventStore,
    name: str,
    fmt: Format,
    since: datetime | None,
    decided: Sequence[str],
    arms: ArmMask,
    checks: Sequence[str] = (),
) -> Generator[str, None, None]:
    """A file's lines, read in one snapshot (closing the generator ends it)."""
    with store.snapshot() as conn:
        masked = arms.with_participants(_studies(conn, ()))
        shape = _Shape(False, "keep", decided=decided, arms=masked, checks=checks)
        yield from _snapshot_lines(conn, store.sealer, name, fmt, since, last_seq(conn), shape)


def _snapshot_lines(
    conn: Connection,
    sealer: Sealer,
    name: str,
    fmt: Format,
    since: datetime | None,
    upto: int,
    shape: _Shape,
) -> Iterator[str]:
    columns = shape.file_columns(name) if name in PER_PARTICIPANT else FILES[name]
    found = lifecycles(conn, sealer, upto, ()) if name in ("participants", "allocations") else {}
    if name == "participants":
        columns = shape.columns(participant_columns(found))
    elif name == "allocations":
        columns = shape.columns(allocation_columns(found))

    def line(record: dict[str, Any]) -> str:
        if fmt == "jsonl":
            return json_line(columns, record)
        return csv_line(map(record.get, columns))

    if fmt == "csv":
        yield csv_line(columns)
    if name == "participants":
        for row in _participants(conn, ()):
            yield line(shape.record(participant_record(row, found.get(row["participant_id"]))))
    elif name == "allocations":
        zones = {row["participant_id"]: row["timezone"] for row in _participants(conn, ())}
        for record in allocation_records(found, zones):
            yield line(shape.record(record))
    elif name in PER_PARTICIPANT:
        as_text = name == "messages" and fmt == "csv"  # its rows made as text (message_lines)
        rows = participant_records(conn, sealer, (name,), (), upto, since, csv_messages=as_text)
        for _name, record in rows:
            yield (
                record
                if as_text
                else line(shape.decision(record) if name == "decisions" else shape.record(record))
            )
    else:
        mask = shape.arms.event if shape.arms.hidden else (lambda raw: raw)
        for raw in map(mask, _events(conn, sealer, upto, since, ())):
            yield event_line(raw) if fmt == "csv" else line(event_record(raw))


def _retrieval_rows(history: Any, row: Any, since: Any) -> Any:
    """retrievals.csv's rows of one participant (`retrieval_rows` takes their id)."""
    return retrieval_rows(history, row["participant_id"], since)


# The per-participant analysis files: the event types each is a fold of, and the fold.
ANALYSES: dict[str, tuple[tuple[str, ...], Callable[..., Iterable[dict[str, Any]]]]] = {
    "results": (RESULT_TYPES, result_rows),
    "retrievals": (RETRIEVAL_TYPES, _retrieval_rows),
    "forms": (FORM_TYPES, form_rows),
    "decisions": (DECISION_TYPES, decision_file_rows),
    "instruments": (INSTRUMENT_TYPES, instrument_rows),
    "evaluations": (EVALUATION_TYPES, evaluation_rows),
}
PER_PARTICIPANT = ("messages", *ANALYSES)


# What the per-participant files take from the participants row.
_FOLDED_COLUMNS = ("participant_id", "timezone", "intervention", "enrolled_at")
# What they take besides to redact a participant's free text (bot.reporting.redact).
_REDACTED_BY = ("name", "phone", "profile")


def participant_records(
    conn: Connection,
    sealer: Sealer,
    names: Sequence[str],
    ids: Sequence[str],
    upto: int,
    since: datetime | None,
    batch: int = 100,
    *,
    every: Callable[[Any], None] | None = None,
    read_ahead: bool = False,
    span: Span | None = None,
    csv_messages: bool = False,
    redact: bool = False,
) -> Iterator[tuple[str, Any]]:
    """(file name, record) of the per-participant files `names` (`messages`, `results`,
    `retrievals`, `forms`), participant by participant in order of enrollment.

    Each batch of participants is read in one query of their events of the types those files
    fold (walking each stream's index, so the export stays linear in participants); a batch's
    events are held in memory while its records are made, with their outbox rows, read in
    one query of the batch's streams (`_outbox_rows`). With `every`, a batch's
    query reads their events of every type, and hands each row to `every` as it is read (the
    events file's lines: `export`). With `read_ahead`, on PostgreSQL, each batch's events are
    read on a second connection while the batch before is worked on (bot.store.prefetch): for
    `export`, which writes as fast as it reads; a download, paced by its client, holds one.
    With `span`, only the participants in it (a chunk of an export in parts). With
    `csv_messages`, messages.csv's rows come as their CSV text (`message_lines`), not records.
    With `redact` (a pseudonymised export), each record's free text is redacted
    (bot.reporting.redact) with what the participant's row holds of their names and phone.
    """
    wanted = set(names)
    types: set[str] = set()
    for name in names:
        types.update(MESSAGE_TYPES if name == "messages" else ANALYSES[name][0])
    messages = message_lines if csv_messages else message_records
    read = _batch_histories(
        conn, sealer, ids, batch, sorted(types), upto, every, read_ahead, span,
        outbox_rows="messages" in wanted, redact=redact,
    )  # fmt: skip
    try:
        for rows, streams, histories, sent in read:
            for row, stream in zip(rows, streams, strict=True):
                history = histories.get(stream, [])
                scrub = Redactor.of(row).record if redact else None
                if "messages" in wanted:
                    for record in messages(history, sent, row, since, row_to_event):
                        if scrub is not None and isinstance(record, dict):
                            record = scrub("messages", record)
                        yield "messages", record
                for name in names:
                    if name in ANALYSES:
                        kinds, rows_of = ANALYSES[name]
                        folded = [row_to_event(r) for r in history if r.event_type in kinds]
                        for record in rows_of(folded, row, since):
                            yield name, scrub(name, record) if scrub else record
    finally:
        read.close()  # a download cut short closes the cursors, and the read ahead, now


# The most rows of a batch's events query one round trip fetches (`_fetched`).
_FETCH = 10_000
# A batch of participant rows, their streams, the streams' histories, and the outbox rows.
_Batch = tuple[list[dict[str, Any]], list[str], dict[str, list[Any]], dict[str, dict[str, Any]]]


def _batch_histories(
    conn: Connection,
    sealer: Sealer,
    ids: Sequence[str],
    batch: int,
    types: Sequence[str],
    upto: int,
    every: Callable[[Any], None] | None,
    read_ahead: bool,
    span: Span | None = None,
    *,
    outbox_rows: bool = False,
    redact: bool = False,
) -> Generator[_Batch, None, None]:
    """(participant rows, their streams, `_histories` of those streams, and with `outbox_rows`
    their outbox rows by outbox id: `_outbox_rows`) of each batch of participants in order
    of enrollment; with `read_ahead`, each batch's events and outbox rows read while the
    batch before is worked on (bot.store.prefetch)."""

    def finish(
        rows: list[dict[str, Any]], streams: list[str], fetched: Callable[[], Any]
    ) -> _Batch:
        found, sent = fetched()
        histories = _histories(conn, sealer, streams, types, upto, every, fetched=lambda: found)
        return rows, streams, histories, sent

    with ahead(conn, enabled=read_ahead) as submit:
        waiting = None
        columns = _FOLDED_COLUMNS + (_REDACTED_BY if redact else ())
        for rows in _participant_batches(conn, ids, batch, columns, span):
            streams = [participant_stream(row["participant_id"]) for row in rows]
            query = _history_query(conn.dialect, streams, types, upto, every is not None)
            # read while the batch before is worked on
            fetched = submit(partial(_fetched_batch, query, streams if outbox_rows else []))
            if waiting is not None:
                yield finish(*waiting)
            waiting = (rows, streams, fetched)
        if waiting is not None:
            yield finish(*waiting)


def _fetched_batch(
    query: Any, streams: Sequence[str], conn: Connection
) -> tuple[list[Any], dict[str, dict[str, Any]]]:
    """A batch's event rows (`_fetched`) and the outbox rows of `streams` (`_outbox_rows`;
    none without them)."""
    return _fetched(query, conn), _outbox_rows(conn, streams)


def _fetched(query: Any, conn: Connection) -> list[Any]:
    """Every row of `query` as the driver returns it, streamed in (bot.store.scan) through a
    server-side cursor on PostgreSQL, whose plan walks the streams' index: as a plain
    statement, before ANALYZE, the planner scanned the whole events table for each batch
    (quadratic). Fetched `_FETCH` rows at a time: each round trip is a wait for the GIL in the
    thread that reads ahead, and a batch's rows are held in memory anyway."""
    rows: list[Any] = []
    for part in batches(conn, query, _FETCH):
        rows += part
    return rows


def _history_query(
    dialect: Any, streams: Sequence[str], types: Sequence[str], upto: int, every_type: bool
) -> Any:
    """The query of the streams' event rows of `types` (of every type with `every_type`) up
    to seq `upto`, in order, through the (stream_id, stream_version) index."""
    where = [
        events.c.stream_id.in_(list(streams)),
        events.c.stream_version > 0,
        events.c.seq <= upto,
    ]
    if not every_type:
        # `event_type || ''` keeps the event-type index out of the planner's reach: SQLite
        # took it and, for each batch, scanned every participant's events of those types
        # (quadratic again); the streams' own index is the one to walk.
        where.append((events.c.event_type + literal("")).in_(list(types)))
    return scan_query(dialect, where, [events.c.stream_id, events.c.stream_version])


def _histories(
    conn: Connection,
    sealer: Sealer,
    streams: Sequence[str],
    types: Sequence[str],
    upto: int,
    every: Callable[[Any], None] | None = None,
    *,
    fetched: Callable[[], list[Any]] | None = None,
) -> dict[str, list[Any]]:
    """The streams' event rows of `types` up to seq `upto` (`_history_query`'s, read now or
    already `fetched`), opened (bot.store.sealing), in order, by stream. With `every`, the
    query reads rows of every type, and each is handed to `every`."""
    if fetched is None:
        query = _history_query(conn.dialect, streams, types, upto, every is not None)
        fetched = partial(_fetched, query, conn)
    wanted = frozenset(types)
    by_stream: dict[str, list[Any]] = {}
    # Their data keys in one query, not one for each participant's first sealed event.
    sealer.preload(conn, [pid for s in streams if (pid := participant_of(s))])
    for opened in opened_raw(fetched(), conn.dialect, sealer, conn):
        if every is not None:
            every(opened)
            if opened.event_type not in wanted:
                continue
        by_stream.setdefault(opened.stream_id, []).append(opened)
    return by_stream


# What a message's record takes from its outbox row.
_OUTBOX_COLUMNS: tuple[str, ...]
_OUTBOX_COLUMNS = ("outbox_id", "status", "error_code", "error_message", "provider_sid")
_OUTBOX_COLUMNS += ("sent_at", "updated_at")


def _outbox_rows(conn: Connection, streams: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The outbox rows of the messages queued on `streams` (a batch's participants'; an
    outbox row's stream is the stream of the event that queued it) by outbox id, through the
    outbox's stream index, in its order (so that PostgreSQL plans the server-side cursor as a
    walk of that index; unordered, it scanned the whole outbox for each batch): as much work
    for each batch whatever the export's size. None, and no query, without streams. (One
    query of every participant's rows, joined to the participants in order of enrollment,
    scanned the whole outbox, and in an export in parts did so again for each chunk.)"""
    if not streams:
        return {}
    found: dict[str, dict[str, Any]] = {}
    where = [outbox.c.stream_id.in_(list(streams))]
    order = [outbox.c.stream_id, outbox.c.position]  # the index's: walked, not sorted
    for rows in records(conn, outbox, _OUTBOX_COLUMNS, where, _FETCH, order_by=order):
        for row in rows:
            found[row["outbox_id"]] = row
    return found
