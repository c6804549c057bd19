"""The partial index of a turn's window of last messages (bot.store.recent): the stream's
message.received, message.queued and step.entered events by stream version.

Without it PostgreSQL answered the window by intersecting the stream's index with the
event-type index and sorting every message of the stream: a turn's cost grew with the stream
(issue 15). Building it reads the events table once.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None

PREDICATE = "event_type IN ('message.received', 'message.queued', 'step.entered')"


def upgrade() -> None:
    op.create_index(
        "ix_events_window",
        "events",
        ["stream_id", "stream_version"],
        sqlite_where=sa.text(PREDICATE),
        postgresql_where=sa.text(PREDICATE),
    )


def downgrade() -> None:
    op.drop_index("ix_events_window", table_name="events")
