"""`tandem study validate [SLUG|PATH]`, `tandem study check SLUG`, `tandem study allocations
SLUG --reveal` and `tandem study unblind SLUG PARTICIPANT`: a study file's problems at
file:line, the audit of a study's concealed allocations, the list itself for an admin (the
reveal recorded), and one participant's arm for an admin (recorded)."""

from __future__ import annotations

import getpass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.root import cli, database_errors, settings_from_env

if TYPE_CHECKING:
    from bot.studies.format import Study


@cli.group(name="study")
def study_group() -> None:
    """Studies (studies/<slug>/study.yaml): validate them, audit their allocations, unblind a
    participant."""


def _study(slug: str) -> Study:
    from bot.runtime.routing import intervention_catalogue
    from bot.studies.catalogue import STUDIES, StudyCatalogue

    try:
        return StudyCatalogue(STUDIES, intervention_catalogue()).study(slug)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


@study_group.command(name="validate")
@click.argument("target", metavar="[SLUG|PATH]", required=False)
def validate(target: str | None) -> None:
    """Check a study (a slug under studies/, a study folder or its study.yaml), or every study
    under studies/ when none is given: each problem at file:line; exit 1 on any error. Needs
    no database and no LLM: the arms' interventions are read from interventions/."""
    from bot.interventions.language.problems import errors
    from bot.runtime.routing import intervention_catalogue
    from bot.studies.catalogue import STUDIES, StudyCatalogue
    from bot.studies.loader import STUDY

    root, slugs = STUDIES, None
    if target is not None:
        given = Path(target)
        folder = given.parent if given.name == STUDY and given.is_file() else given
        if (folder / STUDY).is_file():
            root, slugs = folder.resolve().parent, [folder.resolve().name]
        elif "/" in target or given.exists():
            raise click.ClickException(f"{target}: no {STUDY} there (a study folder or its file)")
        else:
            slugs = [target]
    catalogue = StudyCatalogue(root, intervention_catalogue())
    slugs = catalogue.slugs() if slugs is None else slugs
    if not slugs:
        click.echo(f"no studies under {root}")
        return
    failed = 0
    for slug in slugs:
        problems = catalogue.problems(slug)
        for problem in problems:
            click.echo(str(problem), err=True)
        if errors(problems):
            failed += 1
            click.echo(f"{root / slug}: {len(problems)} problem(s)", err=True)
            continue
        warned = f" ({len(problems)} warning(s))" if problems else ""
        click.echo(f"{root / slug}: ok{warned}")
    if failed:
        raise SystemExit(1)


@study_group.command()
@click.argument("slug")
@database_errors
def check(slug: str) -> None:
    """Recompute every allocation of study SLUG from its secret seed and the allocations
    before it, and list each one that differs (exit 1 if any does)."""
    from bot.runtime.bootstrap import build_store
    from bot.services.study_audit import check_study
    from bot.studies.seed import seed_fingerprint, study_seed

    settings = settings_from_env()
    study = _study(slug)
    try:
        seed = study_seed(slug, settings.master_key)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    store = build_store(settings)
    try:
        mismatches = check_study(store, slug, study, seed)
        count = sum(1 for _ in store.read_all(event_types=["participant.allocated"]))
    finally:
        store.engine.dispose()
    for mismatch in mismatches:
        click.echo(str(mismatch))
    click.echo(
        f"study {slug}: {len(mismatches)} mismatch(es) in the recorded allocations "
        f"({count} allocation event(s) read; seed {seed_fingerprint(seed)})"
    )
    if mismatches:
        raise SystemExit(1)


@study_group.command()
@click.argument("slug")
@click.option("--reveal", is_flag=True, help="Print the arms (recorded as an event).")
@click.option("--reason", required=True, help="Why the list is revealed (kept with the event).")
@database_errors
def allocations(slug: str, reveal: bool, reason: str) -> None:
    """Print study SLUG's allocations so far, one line each: participant, stage, arm, method,
    stratum, block and place. Admins only: without --reveal nothing is printed; the reveal
    is recorded (study.allocations_revealed) with who ran it and why."""
    from bot.runtime.bootstrap import build_store
    from bot.services.study_audit import reveal_allocations

    if not reveal:
        raise click.ClickException("the allocation list is concealed: add --reveal (recorded)")
    settings = settings_from_env()
    _study(slug)
    store = build_store(settings)
    try:
        found = reveal_allocations(store, slug, f"cli:{getpass.getuser()}", reason)
    finally:
        store.engine.dispose()
    for row in found:
        click.echo(
            f"{row['participant']}\tstage {row['stage']}\t{row['arm']}\t{row['method']}\t"
            f"{row['stratum'] or '-'}\tblock {row['block'] if row['block'] is not None else '-'}"
            f"\tplace {row['position'] if row['position'] is not None else '-'}"
        )
    click.echo(f"study {slug}: {len(found)} allocation(s) revealed (recorded)")


@study_group.command()
@click.argument("slug")
@click.argument("participant")
@click.option("--reason", required=True, help="Why (e.g. for their safety); kept with the event.")
@database_errors
def unblind(slug: str, participant: str, reason: str) -> None:
    """Show the arm of PARTICIPANT (their id or phone) in blinded study SLUG. Admins only:
    the unblinding is recorded (participant.unblinded) with who ran it and why; refused for a
    participant not in SLUG or a study that is not blinded."""
    from bot.cli.participant_ref import resolve
    from bot.runtime.bootstrap import build_store
    from bot.runtime.routing import intervention_catalogue
    from bot.services import unblinding
    from bot.services.refusal import Refused
    from bot.studies.catalogue import STUDIES, StudyCatalogue

    settings = settings_from_env()
    catalogue = StudyCatalogue(STUDIES, intervention_catalogue())
    try:
        catalogue.study(slug)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    store = build_store(settings)
    try:
        participant_id = resolve(store, settings, participant, "PARTICIPANT")
        try:
            arm = unblinding.unblind(
                store,
                participant_id,
                reason=reason,
                by=f"cli:{getpass.getuser()}",
                studies=catalogue,
                study=slug,
            )
        except Refused as exc:
            raise click.ClickException(str(exc)) from None
    finally:
        store.engine.dispose()
    click.echo(f"participant {participant_id} of study {slug}: arm {arm} (unblinding recorded)")
