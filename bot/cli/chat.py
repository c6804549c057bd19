"""`tandem chat`: talk to an intervention as a participant, on a throwaway database."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator

import click

from bot.cli.root import cli, settings_from_env
from bot.sandbox import DEFAULT_PHONE

QUIT = {"/quit", "/exit"}
PROMPT = "you> "


def _lines(interactive: bool) -> Iterator[str]:
    """Typed lines with a prompt (and line editing) on a terminal; piped lines as they come."""
    if not interactive:
        yield from (line.rstrip("\r\n") for line in sys.stdin)
        return
    try:
        import readline  # noqa: F401  (line editing and history for input())
    except ImportError:  # pragma: no cover - not on every platform
        pass
    while True:
        try:
            yield input(PROMPT)
        except EOFError:
            click.echo()
            return


@cli.command()
@click.option(
    "--intervention",
    metavar="SLUG|FOLDER",
    help="A slug under interventions/ or the path of an intervention folder "
    "(default: INTERVENTION).",
)
@click.option("--phone", default=DEFAULT_PHONE, show_default=True, help="The participant's phone.")
@click.option("--timezone", help="The participant's IANA timezone (default: DEFAULT_TIMEZONE).")
@click.option("--name", help="The participant's name, as the study team would enter it.")
@click.option("--debug", is_flag=True, help="Send the participant a debug trace after each turn.")
@click.option("--verbose", is_flag=True, help="Log at INFO (default: warnings only).")
def chat(
    intervention: str | None,
    phone: str,
    timezone: str | None,
    name: str | None,
    debug: bool,
    verbose: bool,
) -> None:
    """Talk to an intervention as a participant: a sandbox for intervention authors.

    The whole engine runs in this process on a throwaway SQLite database; this terminal is
    the participant's phone. The clock stands still until /wait moves it (timers fire on the
    way). /help lists the commands. Without OPENAI_API_KEY (or OPENAI_BASE_URL) no LLM is
    called: fixed wording works, and LLM steps send their fallback.
    """
    from bot.sandbox.session import Sandbox, SandboxError

    settings = settings_from_env()
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        sandbox = Sandbox(settings, intervention, phone, timezone, name=name, debug=debug)
    except SandboxError as exc:
        raise click.ClickException(str(exc)) from None
    with sandbox:
        click.echo(sandbox.banner())
        click.echo(sandbox.transcript(sandbox.start()))
        interactive = sys.stdin.isatty()
        try:
            for line in _lines(interactive):
                text = line.strip()
                if not interactive and text:
                    click.echo(PROMPT + text)  # a piped line shows in the transcript as typed
                if text.lower() in QUIT:
                    break
                if text:
                    click.echo(sandbox.handle(text))
        except KeyboardInterrupt:
            click.echo()
