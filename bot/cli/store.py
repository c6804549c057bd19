"""`tandem migrate` and `tandem replay`: the schema and the projections."""

from __future__ import annotations

import sys

import click

from bot.cli.root import cli, database_errors, settings_from_env


@cli.command()
@click.option(
    "--app-role",
    metavar="NAME",
    help="PostgreSQL: also create or update the login role NAME that the web and worker "
    "processes should use: it can read and append events and keep the other tables, but owns "
    "nothing, so it can never alter, truncate or bypass the append-only triggers.",
)
@database_errors
def migrate(app_role: str | None) -> None:
    """Create or upgrade the database schema to the newest revision (idempotent)."""
    from bot.store.database import make_engine
    from bot.store.migrate import current_revision, grant_app_role, upgrade

    settings = settings_from_env()
    engine = make_engine(settings.database_url)
    try:
        upgrade(engine)
        click.echo(f"database at revision {current_revision(engine)}")
        if app_role:
            try:
                grant_app_role(engine, app_role)
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
            click.echo(
                f"role {app_role}: SELECT and INSERT on events and data_keys (a key is "
                "destroyed only through tandem_erase_data_key), no ownership of anything"
            )
    finally:
        engine.dispose()


@cli.command()
@click.option("--check", is_flag=True, help="Exit 1 if any projection differs from the events.")
@click.option(
    "--repair",
    "do_repair",
    is_flag=True,
    help="Overwrite differing projection rows with the rebuilt ones.",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Show a progress bar (default: when stderr is a terminal).",
)
@click.option(
    "--participant",
    "participant_ref",
    default=None,
    help="Replay one participant's stream only (their id or phone) and check or repair only "
    "their rows.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Processes that rebuild and check the rows of the participants in chunks each takes in "
    "turn, in one snapshot: this one and N-1 worker processes it forks; up to one per core; "
    "on a machine that also answers webhooks, leave them a core. Used from 200 participants a "
    "process; a replay of one participant (--participant) runs in one. If events of two "
    "chunks touch one row, the check is made again in one process and says so. The workers "
    "are forked: above 1 is refused where processes cannot fork (Windows).",
)
@database_errors
def replay(
    check: bool, do_repair: bool, progress: bool | None, participant_ref: str | None, jobs: int
) -> None:
    """Rebuild every projection from the events and print how the stored tables differ.

    Events that cannot be read (unknown type or invalid payload) are listed with their seq and
    make the command exit 1; they are never skipped silently.
    """
    from tqdm import tqdm

    from bot.cli.participant_ref import resolve
    from bot.runtime.bootstrap import build_store
    from bot.store.jobs import CannotFork
    from bot.store.replay import check as checked
    from bot.store.replay import repair

    settings = settings_from_env()
    store = build_store(settings)
    bars: list[tqdm] = []

    def advance(events: int) -> None:  # the bar made at the first event: after any fork
        if not bars:
            bars.append(
                tqdm(
                    unit="ev",
                    disable=not progress if progress is not None else None,
                    file=sys.stderr,
                )
            )
        bars[0].update(events)

    try:
        pid = resolve(store, settings, participant_ref) if participant_ref else None
        try:
            report = checked(store, advance, participant_id=pid, jobs=jobs)
        except CannotFork as exc:
            raise click.BadParameter(str(exc), param_hint="--jobs") from None
        finally:
            for bar in bars:
                bar.close()
        for problem in report.unreadable:
            click.echo(f"unreadable event {problem}")
        for diff in report.differences:
            click.echo(f"difference {diff.describe()}")
        if report.again is not None:
            click.echo(f"checked again in one process: {report.again}")
        summary = ", ".join(f"{count} {name}" for name, count in report.counts.items())
        workers = f", in {report.workers + 1} processes" if report.workers else ""
        click.echo(
            f"replayed {report.events} events into {summary}: "
            f"{len(report.differences)} differences, {len(report.unreadable)} unreadable"
            f"{workers}"
        )
        if do_repair and report.differences:
            click.echo(f"repaired {repair(store, report)} rows")
        if report.unreadable or (check and report.differences):
            raise SystemExit(1)
    finally:
        store.engine.dispose()
