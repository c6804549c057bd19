"""`tandem events`: list events as JSON lines."""

from __future__ import annotations

import json

import click

from bot.cli.root import cli, database_errors, settings_from_env
from bot.runtime.bootstrap import build_store
from bot.store.events import participant_stream


@cli.command()
@click.option("--participant", "participant_id", help="Only this participant's stream.")
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
    participant_id: str | None,
    stream_id: str | None,
    event_types: tuple[str, ...],
    after_seq: int,
    limit: int | None,
) -> None:
    """Print events in global order, one JSON object per line."""
    if participant_id and stream_id:
        raise click.UsageError("give --participant or --stream, not both")
    if participant_id:
        stream_id = participant_stream(participant_id)
    store = build_store(settings_from_env())
    try:
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
