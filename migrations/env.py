"""Alembic environment: Tandem's metadata, batch mode for SQLite, URL from config or env."""

from __future__ import annotations

import os

from alembic import context

from bot.store.database import make_engine, normalise_url
from bot.store.schema import UtcDateTime, metadata

config = context.config


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    return normalise_url(url or "sqlite:///tandem.db")


def run_offline() -> None:
    context.configure(
        url=_url(), target_metadata=metadata, literal_binds=True, render_as_batch=True
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url())
    try:
        with engine.connect() as conn:
            _run(conn)
    finally:
        engine.dispose()


def _render_item(type_: str, obj: object, autogen_context: object) -> str | bool:
    """Render Tandem's own column types as the plain types they store, so scripts stay frozen."""
    if type_ == "type" and isinstance(obj, UtcDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def _run(connection) -> None:  # noqa: ANN001
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=True,
        render_item=_render_item,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
