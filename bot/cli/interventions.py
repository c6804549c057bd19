"""`tandem interventions validate [PATH]`, `graph SLUG|FOLDER` and `schema DIR`.

`validate` checks one intervention folder, or every folder under PATH (default: the project's
interventions/), and prints each problem as `file:line: message`; it exits 1 if there is any.
It also says what each one needs from this deployment ("needs an LLM — not configured: set
..."), which does not fail it: enrolling into it is refused until that is set.
`graph` prints the Mermaid flowchart of one intervention (paste it into mermaid.live), and exits
1 with its problems instead if it does not validate. `schema` writes JSON Schema for editors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.root import cli, settings_from_env

if TYPE_CHECKING:
    from bot.core.config import Settings

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "interventions"


@cli.group(name="interventions")
def interventions_group() -> None:
    """Intervention folders: check them, draw them, and describe their keys for editors."""


@interventions_group.command(name="validate")
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
def validate(path: str | None) -> None:
    """Check an intervention (or every one under PATH); exit 1 on any error (warnings are
    printed and do not fail)."""
    from bot.instruments.administration import attach
    from bot.interventions.language.loader import read_intervention
    from bot.interventions.language.problems import errors
    from bot.interventions.validation import needs
    from bot.interventions.validation.validate import intervention_folders, validate_folder
    from bot.runtime.tool_registry import TOOLS
    from modules import MODULES

    folders = intervention_folders(Path(path) if path else DEFAULT_ROOT)
    if not folders:
        click.echo(f"no interventions under {path or DEFAULT_ROOT}")
        return
    failed = 0
    settings = _settings_or_none()
    for folder in folders:
        problems = validate_folder(folder, TOOLS, [n for n in MODULES if n != "step"], attach)
        for problem in problems:
            click.echo(str(problem), err=True)
        if errors(problems):
            failed += 1
            click.echo(f"{folder}: {len(problems)} problem(s)", err=True)
            continue
        warned = f" ({len(problems)} warning(s))" if problems else ""
        click.echo(f"{folder}: ok{warned}")
        intervention, _ = read_intervention(folder)
        if intervention is not None and settings is not None:
            for line in needs.summary(needs.needs_of(intervention), settings):
                click.echo(f"  {line}")
    if failed:
        raise SystemExit(1)


def _settings_or_none() -> Settings | None:
    """The deployment's settings, to say which needs it meets (None: they do not load, and
    validating a folder does not depend on them)."""
    from bot.core.config import ConfigError, load_settings

    try:
        return load_settings()
    except ConfigError as exc:
        click.echo(f"(settings do not load, needs not checked: {exc.problems[0]})", err=True)
        return None


@interventions_group.command(name="schema")
@click.argument("out", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
def schema(out: Path) -> None:
    """Write JSON Schema files for intervention.yaml and each front matter kind into DIR,
    for editors (see docs/interventions.md, "Editor support")."""
    from bot.interventions.language.schema import schemas

    out.mkdir(parents=True, exist_ok=True)
    for name, found in schemas().items():
        (out / name).write_text(json.dumps(found, indent=2) + "\n")
        click.echo(str(out / name))


@interventions_group.command(name="graph")
@click.argument("intervention", metavar="SLUG|FOLDER")
def graph(intervention: str) -> None:
    """Print the Mermaid graph of an intervention (a slug under interventions/ or a folder);
    exit 1 with its problems if it does not validate."""
    from bot.instruments.administration import attach
    from bot.interventions.language.graph import mermaid
    from bot.interventions.language.loader import read_intervention
    from bot.interventions.language.module_graph import CycleTimes
    from bot.interventions.language.problems import errors
    from bot.interventions.validation.validate import validate_folder
    from bot.runtime.tool_registry import TOOLS
    from modules import MODULES

    folder = _folder(intervention)
    problems = errors(validate_folder(folder, TOOLS, [n for n in MODULES if n != "step"], attach))
    if problems:
        for problem in problems:
            click.echo(str(problem), err=True)
        click.echo(f"{folder}: {len(problems)} problem(s); fix them to draw it", err=True)
        raise SystemExit(1)
    settings = settings_from_env()
    cycle = CycleTimes(
        prep_minutes=settings.prep_minutes,
        reminder_hours=settings.reminder_after_prompt_hours,
        auto_feedback_minutes=settings.auto_feedback_after_prompt_minutes,
    )
    tools = {name: tuple(module.tools) for name, module in MODULES.items() if name != "step"}
    found, _ = read_intervention(folder)
    assert found is not None  # it validates
    click.echo(mermaid(found, tools, cycle), nl=False)


def _folder(intervention: str) -> Path:
    """The folder of a slug under interventions/, or a folder holding intervention.yaml."""
    from bot.interventions.language.loader import CONFIG

    for folder in (Path(intervention).expanduser(), DEFAULT_ROOT / intervention):
        if (folder / CONFIG).is_file():
            return folder
    known = ", ".join(sorted(p.parent.name for p in DEFAULT_ROOT.glob(f"*/{CONFIG}")))
    raise click.UsageError(
        f"{intervention}: neither a folder holding {CONFIG} nor a slug under interventions/ "
        f"(known: {known})"
    )
