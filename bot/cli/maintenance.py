"""`tandem maintenance`: the owner's step that makes erasures final in the database files."""

from __future__ import annotations

import getpass

import click

from bot.cli.root import cli, database_errors, settings_from_env


@cli.command()
@database_errors
def maintenance() -> None:
    """Destroy the keys of unknown senders older than UNKNOWN_SENDER_RETENTION_DAYS, then
    rewrite the data_keys table (VACUUM FULL) and VACUUM every other table, so that no data
    key destroyed by an erasure stays in the database files; recorded as
    `maintenance.completed`. Run it with the schema owner's DATABASE_URL (the app role may not
    VACUUM), from cron at least daily (docs/operations.md); it refuses as the app role."""
    from bot.runtime.bootstrap import build_store
    from bot.services import maintenance as service
    from bot.services.refusal import Refused

    settings = settings_from_env()
    store = build_store(settings)
    try:
        try:
            done = service.run(
                store,
                actor=f"cli:{getpass.getuser()}",
                retention_days=settings.unknown_sender_retention_days,
            )
        except Refused as exc:
            raise click.ClickException(str(exc)) from None
    finally:
        store.engine.dispose()
    left = (
        f"{done.pending_erasures} of them still in the files (a transaction older than their "
        "erasure was open): run it again"
        if done.pending_erasures
        else "none left in the files"
    )
    click.echo(
        f"rewritten: {', '.join(done.rewritten) or 'none'}; vacuumed {len(done.vacuumed)} "
        f"tables; {done.expired_senders} unknown senders' keys expired; "
        f"{done.erased_keys} destroyed data keys, {left}"
    )
