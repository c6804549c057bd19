"""`tandem broadcast create|list|show|cancel`: broadcasts from the command line, through the
same service as the API and the console (bot.services.broadcasts)."""

from __future__ import annotations

import getpass
import json
from typing import Any

import click

from bot.cli.root import cli, database_errors, settings_from_env


@cli.group()
def broadcast() -> None:
    """One message to a filtered group of participants (docs/broadcasts.md)."""


@broadcast.command("create")
@click.option("--message", default=None, help="The text: a Jinja2 template per participant.")
@click.option("--step", default=None, help="A step to start instead of a message.")
@click.option("--title", default=None, help="A name for the broadcast.")
@click.option("--study", default=None, help="Only participants of this study.")
@click.option("--arm", default=None, help="Only participants allocated to this arm.")
@click.option("--intervention", default=None, help="Only participants of this intervention.")
@click.option("--status", default=None, help="Participants of this status (default active).")
@click.option("--condition", default=None, help="A profile condition, e.g. \"profile.x == 'y'\".")
@click.option("--at", "local_time", default=None, help="HH:MM in each participant's own zone.")
@click.option("--date", "local_date", default=None, help="YYYY-MM-DD with --at.")
@click.option("--whatsapp-template", default=None, help="An approved template SID (HX...).")
@click.option("--dry-run", is_flag=True, help="Count and show three samples; record nothing.")
@database_errors
def create(
    message: str | None,
    step: str | None,
    title: str | None,
    study: str | None,
    arm: str | None,
    intervention: str | None,
    status: str | None,
    condition: str | None,
    local_time: str | None,
    local_date: str | None,
    whatsapp_template: str | None,
    dry_run: bool,
) -> None:
    """Create a broadcast of --message or --step (sent now, or at --at in each participant's
    timezone) or dry-run it."""
    from bot.runtime.bootstrap import build_store
    from bot.runtime.routing import intervention_catalogue
    from bot.services import broadcasts
    from bot.services.refusal import Refused

    send_at: dict[str, Any] = {"mode": "now"}
    if local_time:
        send_at = {"mode": "local", "time": local_time, "date": local_date}
    request = {
        "message": message,
        "step": step,
        "title": title,
        "filter": {
            "study": study,
            "arm": arm,
            "intervention": intervention,
            "status": status,
            "condition": condition,
        },
        "send_at": send_at,
        "whatsapp_template": whatsapp_template,
    }
    store = build_store(settings_from_env())
    try:
        planned = broadcasts.create(
            store,
            intervention_catalogue(),
            request,
            actor=f"cli:{getpass.getuser()}",
            now=store.clock.now(),
            dry_run=dry_run,
        )
    except Refused as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.engine.dispose()
    if dry_run:
        click.echo(f"dry run: {planned.recipients} recipients; nothing recorded")
    else:
        click.echo(f"broadcast {planned.broadcast_id}: {planned.recipients} recipients planned")
    for sample in planned.samples:
        click.echo(f"  {sample['participant_id']}: {sample['text']}")
    if planned.unrenderable:
        click.echo(f"  {len(planned.unrenderable)} would be held: the message does not render")


@broadcast.command("list")
@database_errors
def list_() -> None:
    """The latest broadcasts with their progress."""
    from bot.runtime.bootstrap import build_store
    from bot.services import broadcasts

    store = build_store(settings_from_env())
    try:
        rows = broadcasts.listing(store)
    finally:
        store.engine.dispose()
    for row in rows:
        click.echo(f"{row['broadcast_id']}  {row['status']:9}  {_progress(row['progress'])}")


@broadcast.command("show")
@click.argument("broadcast_id")
@database_errors
def show(broadcast_id: str) -> None:
    """One broadcast as JSON: what was asked, its progress and who was held, with why."""
    from bot.runtime.bootstrap import build_store
    from bot.services import broadcasts
    from bot.services.refusal import Refused

    store = build_store(settings_from_env())
    try:
        row = broadcasts.show(store, broadcast_id)
        held = [r for r in broadcasts.recipients(store, broadcast_id) if r["state"] == "held"]
    except Refused as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.engine.dispose()
    click.echo(json.dumps({**row, "held": held}, default=str, indent=2))


@broadcast.command("cancel")
@click.argument("broadcast_id")
@click.option("--reason", default=None, help="Why (kept with the cancellation).")
@database_errors
def cancel(broadcast_id: str, reason: str | None) -> None:
    """Stop a broadcast: recipients not yet queued get nothing."""
    from bot.runtime.bootstrap import build_store
    from bot.services import broadcasts
    from bot.services.refusal import Refused

    store = build_store(settings_from_env())
    try:
        row = broadcasts.cancel(
            store, broadcast_id, actor=f"cli:{getpass.getuser()}", reason=reason
        )
    except Refused as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        store.engine.dispose()
    click.echo(f"broadcast {broadcast_id} cancelled: {_progress(row['progress'])}")


def _progress(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())
