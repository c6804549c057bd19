"""`tandem enroll`: enroll one participant from the command line, by the API's and console's
rules (`bot.services.enrollment`)."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.core.addresses import CHANNELS


@cli.command()
@click.argument("phone")
@click.option(
    "--timezone",
    help="IANA name (Europe/London); default: the number's own zone when it has exactly one, "
    "else DEFAULT_TIMEZONE.",
)
@click.option("--intervention", help="Intervention slug; default INTERVENTION.")
@click.option("--name", help="The participant's name (at most 200 characters).")
@click.option(
    "--channel",
    type=click.Choice(CHANNELS),
    default="sms",
    show_default=True,
    help="How the participant is messaged.",
)
@click.option(
    "--study",
    help="Study slug (studies/<slug>/): the arm drawn decides the intervention; default "
    "STUDY when neither --study nor --intervention is given.",
)
@click.option(
    "--baseline",
    "baseline",
    multiple=True,
    metavar="FIELD=VALUE",
    help="A baseline field of the study (repeat for each; a bool is yes or no, a list "
    "separates items with ;).",
)
@database_errors
def enroll(
    phone: str,
    timezone: str | None,
    intervention: str | None,
    name: str | None,
    channel: str,
    study: str | None,
    baseline: tuple[str, ...],
) -> None:
    """Enroll PHONE (E.164, or national in DEFAULT_REGION) in an intervention, or in a study
    (an arm is drawn, concealed, and its intervention run); the worker sends the first message
    shortly after. Refused (exit 1, naming every problem) for an invalid number or timezone,
    an intervention or study that does not exist or validate, a missing or invalid baseline
    field, or a number already enrolled; exit 2 when the intervention needs what is not
    configured (an LLM: OPENAI_API_KEY). The arm is printed unless the study is blinded."""
    given: dict[str, str] = {}
    for pair in baseline:
        field, equals, value = pair.partition("=")
        if not equals or not field.strip():
            raise click.BadParameter(f"{pair!r}: write FIELD=VALUE", param_hint="--baseline")
        given[field.strip()] = value
    from bot.interventions.validation import needs
    from bot.runtime.bootstrap import build_store
    from bot.runtime.routing import intervention_catalogue
    from bot.services import enrollment
    from bot.services.refusal import Refused
    from bot.studies.catalogue import STUDIES, StudyCatalogue

    settings = settings_from_env()
    store = build_store(settings)
    asked = enrollment.Enrollment(
        phone=phone,
        channel=channel,
        timezone=timezone,
        intervention=intervention,
        name=name,
        study=study,
        baseline=given,
        baseline_text=True,
    )
    catalogue = intervention_catalogue()
    try:
        try:
            done = enrollment.enroll(
                store,
                settings,
                catalogue,
                asked,
                source="cli",
                actor=f"cli:{getpass.getuser()}",
                studies=StudyCatalogue(STUDIES, catalogue),
            )
        except Refused as exc:
            if needs.NOT_CONFIGURED in exc.problems.get("intervention", ""):
                # A setting to add, not a wrong argument: exit 2, as for a usage problem.
                click.echo(f"Error: {exc}", err=True)
                raise SystemExit(2) from None
            problems = "; ".join(f"{f}: {m}" for f, m in exc.problems.items())
            raise click.ClickException(problems or str(exc)) from None
        enrolled, allocation = done.enrolled, done.allocation
        where = enrolled.intervention
        if allocation is not None:
            arm = "arm concealed (blinded study)" if done.blinded else f"arm {allocation.arm}"
            where = f"study {allocation.study}, {arm}"
            where += "" if done.blinded else f", {enrolled.intervention}"
        click.echo(
            f"participant {enrolled.participant_id} enrolled in {where} "
            f"({enrolled.channel}, {enrolled.timezone})"
        )
    finally:
        store.engine.dispose()
