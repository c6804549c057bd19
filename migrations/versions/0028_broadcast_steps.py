"""Broadcasts that start a step, and broadcasts made by a study's declared schedule: the
`broadcasts` projection gains `step` (the step each recipient's conversation moves to, instead
of a message) and `schedule` (`<study>/<name>@<date>`: the declared broadcast and occurrence
that made it).

Both are new and optional: every broadcast recorded before this revision sent a message and
was made by hand, which is what the NULLs a replay rebuilds for them say.

Revision ID: 0028
Revises: 0021
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0028"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("broadcasts") as batch:
        batch.add_column(sa.Column("step", sa.String(100), nullable=True))
        batch.add_column(sa.Column("schedule", sa.String(200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("broadcasts") as batch:
        batch.drop_column("schedule")
        batch.drop_column("step")
