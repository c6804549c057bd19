"""`tandem simulate`: rehearse an intervention with synthetic participants (docs/simulate.md)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from bot.cli.root import cli, settings_from_env


@cli.command()
@click.argument("target")
@click.option(
    "--personas",
    "personas",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("personas"),
    show_default=True,
    help="A folder of personas (<name>.yaml).",
)
@click.option("--participants", type=int, default=50, show_default=True)
@click.option("--days", type=int, default=14, show_default=True)
@click.option("--seed", type=int, default=1, show_default=True)
@click.option(
    "--report",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("simulation"),
    show_default=True,
    help="The folder for report.json, report.html, timings.json/.html and (without "
    "--database) simulation.db.",
)
@click.option(
    "--database",
    metavar="URL",
    help="Run on this (empty) database instead of a new SQLite file in the report folder.",
)
@click.option(
    "--prices",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A price table (YAML: currency, per_million_tokens: model -> input/output) that "
    "costs the LLM calls; see docs/prices.example.yaml.",
)
def simulate(  # noqa: PLR0913 - the command's options
    target: str,
    personas: Path,
    participants: int,
    days: int,
    seed: int,
    report: Path,
    database: str | None,
    prices: Path | None,
) -> None:
    """Rehearse TARGET (an intervention folder or slug, or a study: studies/<slug>) with
    synthetic participants.

    Personas (PERSONAS/<name>.yaml) text the real engine (worker, timers, dispatcher to a
    recording messenger) on a simulated clock that jumps from one due moment to the next,
    by SMS or (their `whatsapp` chance) WhatsApp. Scripted personas and fixed-wording
    interventions need no LLM; LLM personas (`kind: llm`) and an intervention that needs an
    LLM use OPENAI_API_KEY / OPENAI_BASE_URL (the persona's `model:` or TANDEM_MODEL), and
    are refused without them. Writes report.json and report.html (steps reached, dead steps,
    drop-off by persona, burden, quiet-hours and WhatsApp-window violations, alerts,
    failures at file:line, time to completion, forms, measurement adherence, LLM calls and
    their cost with --prices, LLM personas' calls) and timings.json/.html (the slowest
    turns: wall-clock, so not in the report), and keeps the run's database for the console and
    `tandem export`; the report is recorded in it too (`simulation.reported`, shown at
    /console/simulation). The same seed gives the same report.json and report.html (the
    draws only, with an LLM).

    A study's participants join it through its enrollment rules (baseline values drawn by
    field type, or fixed by a persona's `baseline:`) and are allocated as real ones are, with
    the run's own key (TANDEM_MASTER_KEY=tandem-simulation-master-key-<seed as 8 digits>
    opens its database), so the arms shown predict nothing of the real sequence; the report
    adds an arms section. Exit 1 for bad personas or prices (at file:line), an unknown or
    invalid intervention or study, or a missing LLM.
    """
    from bot.sandbox import sim_report
    from bot.sandbox.cohort import CohortError
    from bot.sandbox.session import SandboxError
    from bot.sandbox.sim_prices import PricesError, read_prices
    from bot.sandbox.sim_slowest import timings
    from bot.sandbox.simulation import simulate as run_simulation
    from bot.services.simulation_report import record

    try:
        table = read_prices(prices) if prices is not None else None
    except PricesError as exc:
        lines = "\n".join(str(p) for p in exc.problems)
        raise click.ClickException(f"prices cannot be used:\n{lines}") from None
    settings = settings_from_env()
    started = time.perf_counter()
    try:
        run = run_simulation(
            settings,
            target,
            personas,
            participants=participants,
            days=days,
            seed=seed,
            report=report,
            database_url=database,
        )
    except (CohortError, SandboxError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        found = sim_report.build(run, table)
        timed = timings(sim_report.Facts(run), run.turns)
        page = sim_report.body({**found, "timings": timed})
        record(run.cohort.store, found, timed, page, actor="simulation")
    finally:
        run.cohort.close()
    data, page_file = sim_report.write(found, report, timed)
    took = time.perf_counter() - started
    steps = found["steps"]
    click.echo(f"simulated {participants} participants x {days} days in {took:.1f} s")
    click.echo(f"dead steps: {', '.join(steps['dead_steps']) or 'none'}")
    click.echo(f"failures: {found['failures']['total']}")
    click.echo(f"quiet-hours violations: {found['burden']['quiet_hours_violations']}")
    click.echo(f"WhatsApp window violations: {found['burden']['window_violations']}")
    for name, calls in found.get("llm_personas", {}).items():
        click.echo(f"LLM persona {name}: {calls['calls']} calls, {calls['failed']} failed")
    click.echo(f"report: {data} and {page_file} (timings.html: the slowest turns)")
    click.echo(f"database: {run.database_url}")
