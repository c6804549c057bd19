"""`tandem timers list|cancel`: see durable timers and cancel one."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from bot.cli.root import cli, database_errors, settings_from_env

if TYPE_CHECKING:
    from bot.store.event_store import EventStore

STATUSES = ("scheduled", "fired", "skipped", "cancelled")
COLUMNS = ("timer_id", "participant_id", "kind", "status", "due_at", "local_time", "reason")


@cli.group(name="timers")
def timers_group() -> None:
    """List durable timers, or cancel one."""


@timers_group.command(name="list")
@click.option(
    "--participant", "participant_ref", help="Only this participant's timers (an id or a phone)."
)
@click.option("--status", type=click.Choice(STATUSES), help="Only timers in this status.")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@database_errors
def list_timers(participant_ref: str | None, status: str | None, limit: int, as_json: bool) -> None:
    """Timers, soonest due first (due times in UTC; local_time is the participant's); exit 1
    when a filter matches none."""
    from bot.cli.participant_ref import resolve as participant_ref_id
    from bot.runtime.bootstrap import build_store
    from bot.store.reads.timer_list import timers_by_due

    settings = settings_from_env()
    store = build_store(settings)
    try:
        participant_id = None
        if participant_ref:
            participant_id = participant_ref_id(store, settings, participant_ref)
        rows = timers_by_due(store, limit=limit, status=status, participant_id=participant_id)
    finally:
        store.engine.dispose()
    for row in rows:
        if as_json:
            click.echo(json.dumps(row, default=str, ensure_ascii=False))
        else:
            click.echo("  ".join(_cell(row[c]) for c in COLUMNS))
    if not as_json:
        click.echo(f"{len(rows)} timer(s)", err=True)
    if not rows and (participant_ref or status):
        raise click.ClickException("no timers match")


@timers_group.command(name="cancel")
@click.argument("timer_id")
@click.option("--reason", default="operator", show_default=True, help="Recorded in the event.")
@click.option(
    "--whole-schedule",
    is_flag=True,
    help="For an occurrence of a daily schedule: delete the schedule, not just this day.",
)
@database_errors
def cancel(timer_id: str, reason: str, whole_schedule: bool) -> None:
    """Cancel a scheduled timer (a `timer.cancelled` event). Cancelling one occurrence of a
    daily schedule schedules the next one; --whole-schedule ends the schedule instead."""
    from bot.runtime.bootstrap import build_store

    store = build_store(settings_from_env())
    try:
        click.echo(_cancel(store, timer_id, reason, whole_schedule))
    finally:
        store.engine.dispose()


def _cancel(store: EventStore, timer_id: str, reason: str, whole_schedule: bool) -> str:
    from bot.store.event_types.timers import TimerCancelled
    from bot.store.events import EventData, NewEvent, participant_stream
    from bot.store.timer_firing import timer_row
    from bot.timers.schedules import delete_schedule, next_occurrence

    with store.transaction() as tx:
        row = timer_row(tx, timer_id)
        if row is None or not row["participant_id"]:
            raise click.ClickException(f"no participant timer {timer_id!r}")
        stream = participant_stream(row["participant_id"])
        person = tx.lock(stream)
        row = timer_row(tx, timer_id)
        assert row is not None
        if row["status"] != "scheduled":
            raise click.ClickException(
                f"timer {timer_id} is {row['status']}; only scheduled timers can be cancelled"
            )
        schedule_id = (row["payload"] or {}).get("schedule_id")
        decided: list[EventData]
        if schedule_id and whole_schedule:
            decided = delete_schedule(schedule_id, [row], reason)
            said = f"deleted schedule {schedule_id} and cancelled timer {timer_id}"
        else:
            decided = [TimerCancelled(timer_id=timer_id, reason=reason)]
            said = f"cancelled timer {timer_id}"
            nxt = next_occurrence(row, person, store.clock.now()) if person else None
            if nxt is not None:
                decided.append(nxt)
                said += f"; the schedule goes on at {nxt.local_time} ({nxt.timer_id})"
        tx.append(stream, [NewEvent(e, meta={"actor": "cli"}) for e in decided])
    return said


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if hasattr(value, "isoformat"):
        return value.isoformat(timespec="seconds")
    return str(value)
