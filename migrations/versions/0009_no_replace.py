"""SQLite: refuse an INSERT that would replace an existing event (`REPLACE INTO events`, or
`INSERT OR REPLACE`), which fires no DELETE trigger unless recursive triggers are on.

PostgreSQL has no REPLACE: `INSERT … ON CONFLICT DO UPDATE` fires the UPDATE trigger of 0001.

Revision ID: 0009
Revises: 0003
Create Date: 2026-11-26
"""

from alembic import op

revision = '0009'
down_revision = '0003'
branch_labels = None
depends_on = None

# Each EXISTS is one lookup in an index the table has anyway (primary key, event_id, the
# stream's version): a new event finds none of them. The idempotency key is left out on
# purpose: `INSERT … ON CONFLICT DO NOTHING` on it is how a redelivery appends nothing, and a
# REPLACE over it fires the DELETE trigger on Tandem's connections (recursive_triggers, set by
# bot.store.database).
NO_REPLACE = """
CREATE TRIGGER events_no_replace BEFORE INSERT ON events
WHEN EXISTS (SELECT 1 FROM events WHERE seq = NEW.seq)
  OR EXISTS (SELECT 1 FROM events WHERE event_id = NEW.event_id)
  OR EXISTS (SELECT 1 FROM events
             WHERE stream_id = NEW.stream_id AND stream_version = NEW.stream_version)
BEGIN SELECT RAISE(ABORT, 'events are append-only: an insert over an existing event refused'); END
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(NO_REPLACE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS events_no_replace")
