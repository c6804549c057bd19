"""Exporting for analysis: run an export and record it (`export.written`, naming who), for
`tandem export` (files in a folder) and the console (a file or the codebook, downloaded).

The files themselves (columns, cells, pseudonymisation, worker processes) are
`bot.reporting.export`; this module decides what is asked for, adds the codebook of the
participants' interventions, and records every download.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from bot.reporting import codebook
from bot.reporting.arm_mask import NAMES, ArmMask
from bot.reporting.export import (
    FILES,
    SYSTEM_STREAM,
    Counts,
    UnknownParticipant,
    export,
    intervention_slugs,
    parse_since,
    stream_file,
)
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.event_types.exports import ExportWritten
from bot.store.events import NewEvent
from bot.store.jobs import CannotFork

Format = Literal["csv", "jsonl"]
FreeText = Literal["keep", "drop"]
FORMATS: tuple[Format, ...] = ("csv", "jsonl")
CODEBOOK_FORMATS = ("md", "json")


def to_folder(
    store: EventStore,
    out_dir: Path,
    fmt: Format,
    *,
    interventions: Path,
    actor: str,
    since: datetime | None = None,
    participant_ids: Sequence[str] = (),
    pseudonymise: bool = False,
    free_text: FreeText = "keep",
    jobs: int = 1,
    progress: Callable[[str, int | None], Callable[[int], object]] | None = None,
    arms: ArmMask = NAMES,
) -> Counts:
    """Write every file and the codebook (of the interventions under `interventions` that the
    exported participants are in) into `out_dir`, recorded as `export.written` by `actor`;
    a blinded study's arms as `arms` says (bot.services.blinding.export_arms).
    Refuses an unknown participant (field `participant`) and jobs where processes cannot fork
    (field `jobs`)."""
    try:
        slugs = intervention_slugs(store, participant_ids)
        return export(
            store,
            out_dir,
            fmt,
            since=since,
            participant_ids=participant_ids,
            progress=progress,
            pseudonymise=pseudonymise,
            free_text=free_text,
            actor=actor,
            documents=codebook.documents(interventions, slugs),
            jobs=jobs,
            arms=arms,
        )
    except UnknownParticipant as exc:
        raise Refused(str(exc), "participant") from None
    except CannotFork as exc:
        raise Refused(str(exc), "jobs") from None


def file_stream(
    store: EventStore,
    name: str,
    fmt: str,
    *,
    since_text: str,
    actor: str,
    interventions: Path | None = None,
    arms: ArmMask = NAMES,
) -> Iterator[str]:
    """One file (`participants`, `messages`, ...) as text, a row at a time, recorded as
    `export.written` by `actor` when the stream ends; decisions.csv's per-decision columns
    are those of the decision files under `interventions`, evaluations.csv's checklist columns
    those of their `review_checklist:`. Refuses a file that does not exist
    (`not_found`) and a `since` that is not a UTC date or datetime."""
    if name not in FILES or fmt not in FORMATS:
        raise Refused(
            f"No export {name}.{fmt}: the files are {', '.join(FILES)}, as csv or jsonl, "
            "and codebook.md or codebook.json.",
            kind="not_found",
        )
    try:
        since = parse_since(since_text) if since_text else None
    except ValueError as exc:
        raise Refused(str(exc), "since") from None
    decided: list[str] = []
    checks: list[str] = []
    if name in ("decisions", "evaluations") and interventions is not None:
        books = codebook.documents(interventions, intervention_slugs(store))
        decided = codebook.decision_names(books)
        checks = codebook.checklist_names(books)
    return stream_file(
        store, name, fmt, since=since, actor=actor, decided=decided, arms=arms, checks=checks
    )


def codebook_download(store: EventStore, fmt: str, *, interventions: Path, actor: str) -> str:
    """codebook.md or codebook.json of the participants' interventions, as `tandem export`
    writes it, recorded as `export.written` by `actor` like any download."""
    if fmt not in CODEBOOK_FORMATS:
        raise Refused(f"No codebook.{fmt}: codebook.md or codebook.json.", kind="not_found")
    exported = ExportWritten(
        format=fmt,
        files=[f"codebook.{fmt}"],
        pseudonymised=False,
        free_text="keep",
        participants=0,
        messages=0,
        events=0,
    )
    store.append(SYSTEM_STREAM, [NewEvent(exported, meta={"actor": actor})])
    return codebook.documents(interventions, intervention_slugs(store))[f"codebook.{fmt}"]
