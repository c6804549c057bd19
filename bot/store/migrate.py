"""Run Alembic migrations programmatically (the scripts live in the top-level migrations/)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from bot.store.schema import data_keys, events, key_checks, metadata

# Migration 0021: the one way the app role destroys a data key.
ERASE_FUNCTION = "tandem_erase_data_key(varchar, timestamptz)"
MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Upgrade the engine's database to `revision` (head by default)."""
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with engine.connect() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        conn.commit()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def grant_app_role(engine: Engine, role: str) -> list[str]:
    """Create (if needed) a PostgreSQL login role for the app processes that may read and append
    events and keep the other tables, but owns nothing: it cannot alter, drop, truncate or
    disable the triggers of any table, nor update or delete an event. Returns the statements run.

    Data keys: it may read and add them, never UPDATE or DELETE one (one statement would make
    every participant unreadable); an erasure destroys a key through `tandem_erase_data_key`
    (migration 0021), which needs the participant's `participant.erased` recorded.

    Run as the schema's owner after `upgrade`, and again after every upgrade (grants change).
    """
    if engine.dialect.name != "postgresql":
        raise ValueError("--app-role is for PostgreSQL; a SQLite file has no roles")
    if not role.replace("_", "").isalnum() or not role[0].isalpha() or len(role) > 63:
        raise ValueError(f"role name {role!r}: use letters, digits and _ (starting with a letter)")
    kept = (events, data_keys, key_checks)
    others = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables if t not in kept)
    statements = [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') "
        f'THEN CREATE ROLE "{role}" LOGIN; END IF; END $$',
        f'GRANT CONNECT ON DATABASE "{engine.url.database}" TO "{role}"',
        f'GRANT USAGE ON SCHEMA public TO "{role}"',
        f'REVOKE ALL ON "{events.name}" FROM "{role}"',
        f'GRANT SELECT, INSERT ON "{events.name}" TO "{role}"',
        f'GRANT SELECT, INSERT, UPDATE, DELETE ON {others} TO "{role}"',
        f'REVOKE ALL ON "{data_keys.name}" FROM "{role}"',
        f'GRANT SELECT, INSERT ON "{data_keys.name}" TO "{role}"',
        f'REVOKE ALL ON "{key_checks.name}" FROM "{role}"',
        f'GRANT SELECT, INSERT ON "{key_checks.name}" TO "{role}"',
        f'GRANT EXECUTE ON FUNCTION {ERASE_FUNCTION} TO "{role}"',
        f'GRANT SELECT ON alembic_version TO "{role}"',
        f'GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "{role}"',
    ]
    with engine.begin() as conn:
        for statement in statements:
            conn.execute(text(statement))
    return statements
