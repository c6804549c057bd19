"""`tandem interventions validate [PATH]` and `tandem interventions graph PATH`.

`validate` checks one intervention folder, or every folder under PATH (default: the project's
interventions/), and prints each problem as `file:line: message`; it exits 1 if there is any.
`graph` prints the Mermaid flowchart of one intervention (paste it into mermaid.live).
"""

from __future__ import annotations

from pathlib import Path

import click

from bot.cli.root import cli, settings_from_env
from bot.interventions.graph import mermaid
from bot.interventions.loader import CONFIG, read_intervention
from bot.interventions.module_graph import CycleTimes
from bot.interventions.validate import intervention_folders, validate_folder
from bot.runtime.tool_registry import TOOLS
from modules import MODULES

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "interventions"


@cli.group(name="interventions")
def interventions_group() -> None:
    """Intervention folders: check them, and draw them."""


@interventions_group.command(name="validate")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
def validate(path: str | None) -> None:
    """Check an intervention (or every one under PATH); exit 1 on any problem."""
    folders = intervention_folders(Path(path) if path else DEFAULT_ROOT)
    if not folders:
        click.echo(f"no interventions under {path or DEFAULT_ROOT}")
        return
    failed = 0
    for folder in folders:
        problems = validate_folder(folder, TOOLS, [n for n in MODULES if n != "step"])
        for problem in problems:
            click.echo(str(problem), err=True)
        if problems:
            failed += 1
            click.echo(f"{folder}: {len(problems)} problem(s)", err=True)
        else:
            click.echo(f"{folder}: ok")
    if failed:
        raise SystemExit(1)


@interventions_group.command(name="graph")
@click.argument("path", type=click.Path(exists=True, file_okay=False))
def graph(path: str) -> None:
    """Print the Mermaid graph of the intervention in PATH."""
    if not (Path(path) / CONFIG).is_file():
        raise click.UsageError(f"{path} holds no {CONFIG}: give one intervention's folder")
    intervention, problems = read_intervention(path)
    if intervention is None:
        for problem in problems:
            click.echo(str(problem), err=True)
        raise SystemExit(1)
    settings = settings_from_env()
    cycle = CycleTimes(
        prep_minutes=settings.prep_minutes,
        reminder_hours=settings.reminder_after_prompt_hours,
        auto_feedback_minutes=settings.auto_feedback_after_prompt_minutes,
    )
    tools = {name: tuple(module.tools) for name, module in MODULES.items() if name != "step"}
    click.echo(mermaid(intervention, tools, cycle), nl=False)
