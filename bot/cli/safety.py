"""`tandem safety scan`: run the crisis screen over lines of text, one JSON verdict per line.

For checking the screen on a corpus before a study ("does it flag these? does it leave those
alone?"): `tandem safety scan < messages.txt`. Every input line gives one output line, in order,
blank lines included: {"text": ..., "crisis": true|false, "rule": id or null}.

`--intervention SLUG`: interventions will add phrases and exclusions of their own. Until they
can, the default intervention (INTERVENTION) is accepted and screens with the maintained
catalogue, and any other slug is refused with an error, so that no one believes a study's own
phrases were checked when they were not.
"""

from __future__ import annotations

import json
import sys

import click

from bot.cli import cli, settings_from_env
from bot.safety import CrisisScreen


@cli.group(name="safety")
def safety_group() -> None:
    """The deterministic crisis screen run on every inbound message."""


@safety_group.command(name="scan")
@click.option(
    "--intervention",
    "slug",
    help="Screen as this intervention does (for now only the default INTERVENTION).",
)
def scan(slug: str | None) -> None:
    """Read messages on stdin, one per line; print one JSON verdict per line."""
    if slug is not None:
        default = settings_from_env().intervention
        if slug != default:
            raise click.UsageError(
                f"intervention {slug!r}: interventions cannot extend the crisis screen yet; "
                f"only the default intervention {default!r} (INTERVENTION) can be given, and it "
                "uses the maintained catalogue"
            )
    screen = CrisisScreen.from_default()
    for line in sys.stdin:
        text = line.rstrip("\r\n")
        result = screen.check(text)
        verdict = {"text": text, "crisis": result.crisis, "rule": result.rule}
        click.echo(json.dumps(verdict, ensure_ascii=False))
