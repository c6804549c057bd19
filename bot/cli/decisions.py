"""`tandem decisions check [NAME]`: the audit of micro-randomised decision points, every
draw recomputed from the seed (docs/decisions.md)."""

from __future__ import annotations

import click

from bot.cli.root import cli, database_errors, settings_from_env


@cli.group(name="decisions")
def decisions_group() -> None:
    """Micro-randomised decision points (decisions/<name>.md): audit their draws."""


@decisions_group.command()
@click.argument("name", required=False)
@database_errors
def check(name: str | None) -> None:
    """Recompute the draw of every decision point (of decision NAME, or all) from the seed
    (TANDEM_MASTER_KEY's), check that it gives the option logged from the probabilities
    logged, and list each point that differs (exit 1 if any does)."""
    from bot.interventions.interpreter.decision_timers import draw_seed
    from bot.runtime.bootstrap import build_store
    from bot.services.decision_audit import check_decisions

    settings = settings_from_env()
    seed = draw_seed(settings.master_key)
    store = build_store(settings)
    try:
        audit = check_decisions(store, seed, name)
    finally:
        store.engine.dispose()
    for mismatch in audit.mismatches:
        click.echo(str(mismatch))
    which = f"decision {name}" if name else "decisions"
    click.echo(
        f"{which}: {len(audit.mismatches)} mismatch(es) in {audit.points} decision point(s) "
        f"({audit.available} available, each draw recomputed; seed {seed.fingerprint})"
    )
    if audit.mismatches:
        raise SystemExit(1)
