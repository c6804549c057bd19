"""`tandem events`: list events as JSON lines."""

from __future__ import annotations

import difflib
import json

import click

from bot.cli.root import cli, database_errors, settings_from_env


@cli.command()
@click.option(
    "--participant", "participant_ref", help="Only this participant's stream (an id or a phone)."
)
@click.option("--stream", "stream_id", help="Only this stream (e.g. system).")
@click.option("--type", "event_types", multiple=True, help="Only this event type (repeatable).")
@click.option(
    "--after",
    "after_seq",
    type=int,
    default=0,
    show_default=True,
    help="Only events after this global seq.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Stop after this many events.")
@database_errors
def events(
    participant_ref: str | None,
    stream_id: str | None,
    event_types: tuple[str, ...],
    after_seq: int,
    limit: int | None,
) -> None:
    """Print events in global order, one JSON object per line (exit 1 when a filter matches
    none)."""
    from bot.cli.participant_ref import resolve as participant_ref_id
    from bot.runtime.bootstrap import build_store
    from bot.store.events import REGISTRY, participant_stream

    if participant_ref and stream_id:
        raise click.UsageError("give --participant or --stream, not both")
    unknown = sorted(set(event_types) - set(REGISTRY))
    if unknown:
        raise click.ClickException("--type: " + "; ".join(_unknown_type(n) for n in unknown))
    settings = settings_from_env()
    store = build_store(settings)
    count = 0
    try:
        if participant_ref:
            stream_id = participant_stream(participant_ref_id(store, settings, participant_ref))
        for count, row in enumerate(
            store.read_rows(after_seq, stream_id=stream_id, event_types=event_types), start=1
        ):
            click.echo(
                json.dumps(
                    {
                        "seq": row.seq,
                        "event_id": row.event_id,
                        "stream_id": row.stream_id,
                        "stream_version": row.stream_version,
                        "type": row.event_type,
                        "schema_version": row.schema_version,
                        "occurred_at": row.occurred_at.isoformat(),
                        "recorded_at": row.recorded_at.isoformat(),
                        "idempotency_key": row.idempotency_key,
                        "data": row.data,
                        "meta": row.meta,
                    },
                    ensure_ascii=False,
                )
            )
            if limit is not None and count >= limit:
                break
    finally:
        store.engine.dispose()
    if count == 0 and (participant_ref or stream_id or event_types or after_seq):
        raise click.ClickException("no events match")


def _unknown_type(name: str) -> str:
    from bot.store.events import REGISTRY

    close = difflib.get_close_matches(name, REGISTRY, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else " (see docs/architecture.md)"
    return f"unknown event type {name!r}{hint}"
