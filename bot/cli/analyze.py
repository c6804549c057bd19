"""`tandem analyze decisions NAME`: the proximal effects of a decision's options (docs/
decisions.md), from the database's decision events or from an export's decisions.csv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from bot.cli.root import cli, database_errors, settings_from_env

if TYPE_CHECKING:
    import pandas as pd


@cli.group()
def analyze() -> None:
    """Analyses of a study's data."""


@analyze.command()
@click.argument("name")
@click.option("--moderator", "moderators", multiple=True, help="A moderator (repeatable).")
@click.option("--reference", help="The reference option (default: the first).")
@click.option("--json", "as_json", is_flag=True, help="Print the estimates as JSON.")
@click.option(
    "--export",
    "export_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Read decisions.csv from this export folder instead of the database.",
)
@database_errors
def decisions(
    name: str,
    moderators: tuple[str, ...],
    reference: str | None,
    as_json: bool,
    export_dir: Path | None,
) -> None:
    """Estimate each option's effect on the decision's outcome against the reference."""
    import pandas as pd

    from bot.analysis.report import analyze_decision, estimates_json, format_estimates
    from bot.reporting.decision_rows import decision_rows
    from bot.runtime.bootstrap import build_store
    from bot.store.event_types.decisions import DecisionMade, DecisionOutcome

    if export_dir is not None:
        path = export_dir / "decisions.csv"
        if not path.is_file():
            raise click.ClickException(f"no decisions.csv in {export_dir}")
        frame = exported(pd.read_csv(path), name)
    else:
        store = build_store(settings_from_env())
        try:
            types = (DecisionMade.event_type, DecisionOutcome.event_type)
            frame = pd.DataFrame(decision_rows(store.read_all(event_types=types)))
        finally:
            store.engine.dispose()
    if frame.empty:
        raise click.ClickException("no decision points recorded")
    try:
        found = analyze_decision(frame, name, moderators, reference)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(estimates_json(found), indent=2) if as_json else format_estimates(found))


def exported(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """An export's decisions.csv as the analysis reads it: the participant (or study code) as
    `participant`, without the `p_<option>` and `mod_<name>` columns of other decisions
    (blank in every row of decision `name`)."""
    renamed = {"participant_id": "participant", "study_code": "participant"}
    frame = frame.rename(columns=renamed)
    mine = frame.loc[frame["decision"] == name] if "decision" in frame.columns else frame
    if mine.empty:
        return frame  # the analysis says there is no such decision
    others = [c for c in mine.columns if str(c).startswith(("p_", "mod_")) and mine[c].isna().all()]
    return frame.drop(columns=others)
