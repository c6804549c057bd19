"""`tandem enroll`: enroll one participant from the command line, by the API's and console's
rules (`bot.services.enrollment`)."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.interventions.validation import needs
from bot.runtime.bootstrap import build_store
from bot.runtime.routing import intervention_catalogue
from bot.services import enrollment
from bot.services.refusal import Refused


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
    type=click.Choice(enrollment.CHANNELS),
    default="sms",
    show_default=True,
    help="How the participant is messaged.",
)
@database_errors
def enroll(
    phone: str, timezone: str | None, intervention: str | None, name: str | None, channel: str
) -> None:
    """Enroll PHONE (E.164, or national in DEFAULT_REGION) in an intervention; the worker sends
    the first message shortly after. Refused (exit 1, saying why) for an invalid number or
    timezone, an intervention that does not exist or validate, or a number already enrolled;
    exit 2 when the intervention needs what is not configured (an LLM: OPENAI_API_KEY)."""
    settings = settings_from_env()
    store = build_store(settings)
    asked = enrollment.Enrollment(
        phone=phone, channel=channel, timezone=timezone, intervention=intervention, name=name
    )
    try:
        try:
            enrolled = enrollment.enroll(
                store,
                settings,
                intervention_catalogue(),
                asked,
                source="cli",
                actor=f"cli:{getpass.getuser()}",
            )
        except Refused as exc:
            if needs.NOT_CONFIGURED in exc.problems.get("intervention", ""):
                # A setting to add, not a wrong argument: exit 2, as for a usage problem.
                click.echo(f"Error: {exc}", err=True)
                raise SystemExit(2) from None
            raise click.ClickException(str(exc)) from None
        click.echo(
            f"participant {enrolled.participant_id} enrolled in {enrolled.intervention} "
            f"({enrolled.channel}, {enrolled.timezone})"
        )
    finally:
        store.engine.dispose()
