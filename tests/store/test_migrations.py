"""Migrations: upgrading an empty database yields exactly the declared schema."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from bot.store.database import make_engine
from bot.store.migrate import current_revision, head_revision
from bot.store.schema import metadata


def test_upgraded_database_matches_the_metadata_with_no_autogenerate_diff(
    database_url: str,
) -> None:
    engine = make_engine(database_url)
    try:
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
        assert diff == []
    finally:
        engine.dispose()
