"""Timers: an index on `updated_at`, so the scheduler's sweep reads only the timers that changed
since its last sweep (written or cancelled by another process) instead of every pending one.

Revision ID: 0016
Revises: 0011
Create Date: 2026-11-26
"""

from alembic import op

revision = '0016'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('timers', schema=None) as batch_op:
        batch_op.create_index('ix_timers_updated_at', ['updated_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('timers', schema=None) as batch_op:
        batch_op.drop_index('ix_timers_updated_at')
