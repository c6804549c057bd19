"""participants.memory: a participant's conversation memory (bot.store.memory), so that a turn
decides on projections instead of folding the participant's whole stream (issue 15).

Existing rows get NULL: `tandem replay --check` reports them and `tandem replay --repair`
writes them; until then a turn folds that participant's stream as before (and says so in the
log).

Revision ID: 0015
Revises: 0005
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = '0015'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(
            sa.Column("memory", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("memory")
