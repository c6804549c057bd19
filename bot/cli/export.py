"""`tandem export`: write participants, messages and events for analysis (CSV or JSON Lines)."""

from __future__ import annotations

import getpass
import sys
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from bot.cli.root import cli, database_errors, settings_from_env


class Since(click.ParamType):
    name = "DATE|DATETIME"

    def convert(self, value: Any, param: Any, ctx: Any) -> datetime:
        from bot.reporting.export import parse_since

        if isinstance(value, datetime):
            return value
        try:
            return parse_since(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


class ParticipantId(click.ParamType):
    name = "ID"

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        try:
            return str(uuid.UUID(str(value)))
        except ValueError:
            self.fail(f"{value!r} is not a participant id (a UUID)", param, ctx)


@cli.command("export")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory to write into (created if missing; files in it are replaced).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True
)
@click.option(
    "--since",
    type=Since(),
    help="Only messages and events from this UTC date or datetime on (e.g. 2026-01-31).",
)
@click.option(
    "--participant",
    "participant_ids",
    type=ParticipantId(),
    multiple=True,
    help="Only this participant (repeatable).",
)
@click.option(
    "--pseudonymise",
    is_flag=True,
    help="A stable study code instead of the participant id, no phone numbers or names, and "
    "no raw events file (event payloads carry phone numbers and names).",
)
@click.option(
    "--free-text",
    type=click.Choice(["keep", "drop"]),
    default="keep",
    show_default=True,
    help="With --pseudonymise: keep or drop message texts, media, profile, notes, judgements, "
    "text answers and retrieval queries.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes that write the per-participant files (messages, results, retrievals, "
    "forms, instruments) and the events file's lines, in chunks each takes in turn: this "
    "one and N-1 worker processes it forks; up to one per core. The files are the same; on a "
    "machine that also answers webhooks, leave them a core. Used from 200 participants a "
    "process; an export of named participants (--participant) runs in one. The workers are "
    "forked: above "
    "1 is refused where processes cannot fork (Windows).",
)
@click.option(
    "--unblinded",
    is_flag=True,
    help="Name the arms of blinded studies (recorded with the export). Without it, their "
    "arms are written as their codes, as an admin or statistician exports them.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show progress bars on stderr (default: when stderr is a terminal).",
)
@database_errors
def export_command(
    out_dir: Path,
    fmt: str,
    since: datetime | None,
    participant_ids: tuple[str, ...],
    pseudonymise: bool,
    free_text: str,
    jobs: int,
    unblinded: bool,
    progress: bool | None,
) -> None:
    """Write participants, messages, results, retrievals, forms, instruments and events
    files, and a codebook, for analysis.

    messages.* is every inbound and outbound message of each participant (direction, text,
    status, error code, segments, UTC and participant-local times); results.* is one row per
    participant and measurement occasion (question, scheduled and answered local times,
    value, latency, answered/missed/rejected/pending); retrievals.* is one row per document
    each retrieval found; forms.* is one row per form field with a value (type, domain, when
    it was set, the message it came from); instruments.* is one row per administration of a
    questionnaire that ended (items, total, band, duration); codebook.md and codebook.json
    describe every variable of the participants' interventions (type, options, unit, range,
    the file and line defining it) and every column of results, retrievals, forms and
    instruments; events.* is the raw
    event stream. Participants are all included; --since only limits messages, results,
    retrievals, forms and events. Files are written readable by their owner only (0600), and
    the export is recorded as an event (`export.written`: who, when, what). A blinded study's
    arms are written as their codes (docs/studies.md, "Blinding") unless --unblinded.
    """
    from tqdm import tqdm

    from bot.interventions.interpreter.applied import INTERVENTIONS
    from bot.runtime.bootstrap import build_store
    from bot.runtime.routing import intervention_catalogue
    from bot.services import export
    from bot.services.blinding import export_arms
    from bot.services.refusal import Refused
    from bot.studies.catalogue import STUDIES, StudyCatalogue

    settings = settings_from_env()
    studies = StudyCatalogue(STUDIES, intervention_catalogue(INTERVENTIONS), typed=False)
    arms = export_arms(None, studies, settings.master_key, unblinded=unblinded)
    store = build_store(settings)
    bars: list[tqdm] = []

    def bar(name: str, total: int | None) -> Callable[[int], object]:
        shown = tqdm(
            total=total,
            desc=name,
            unit="row",
            disable=not progress if progress is not None else None,
            file=sys.stderr,
        )
        bars.append(shown)
        return shown.update

    try:
        counts = export.to_folder(
            store,
            out_dir,
            fmt,  # type: ignore[arg-type]  # a click.Choice of the formats
            interventions=INTERVENTIONS,
            actor=f"cli:{getpass.getuser()}",
            since=since,
            participant_ids=participant_ids,
            pseudonymise=pseudonymise,
            free_text=free_text,  # type: ignore[arg-type]  # a click.Choice of keep, drop
            jobs=jobs,
            progress=bar,
            arms=arms,
        )
    except Refused as exc:
        raise click.BadParameter(exc.message, param_hint=f"--{exc.field}") from None
    except OSError as exc:
        raise click.ClickException(f"cannot write the export to {out_dir}: {exc}") from None
    finally:
        for shown in bars:
            shown.close()
        store.engine.dispose()
    workers = f", in {counts.workers + 1} processes" if counts.workers else ""
    if pseudonymise:
        click.echo(
            f"exported {counts.participants} participants, {counts.messages} messages, "
            f"{counts.results} results, {counts.retrievals} retrievals and {counts.forms} form "
            "values, with a codebook, "
            f"pseudonymised (free text: {free_text}; no raw events file), "
            f"to {out_dir} ({fmt}){workers}"
        )
        return
    click.echo(
        f"exported {counts.participants} participants, {counts.messages} messages, "
        f"{counts.results} results, {counts.retrievals} retrievals, {counts.forms} form values "
        f"and {counts.events} events, "
        f"with a codebook, to {out_dir} ({fmt}){workers}"
    )
