"""Studies: the participants projection's `study` and `arm` columns and the `allocations`
projection (one row per allocation, in the order made), both folds of participant.allocated.

No allocation existed before this revision, so empty columns and an empty table are what a
replay rebuilds.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
    seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    utc = sa.DateTime(timezone=True)
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("study", sa.String(100), nullable=True))
        batch.add_column(sa.Column("arm", sa.String(100), nullable=True))
    op.create_table(
        "allocations",
        sa.Column("allocation_id", sa.String(80), primary_key=True),
        sa.Column("participant_id", sa.String(36), nullable=False),
        sa.Column("study", sa.String(100), nullable=False),
        sa.Column("stage", sa.Integer(), nullable=False),
        sa.Column("arm", sa.String(100), nullable=False),
        sa.Column("first_arm", sa.String(100), nullable=True),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("sequence", sa.String(120), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("stratum", sa.Text(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=True),
        sa.Column("block_size", sa.Integer(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("probabilities", json, nullable=False),
        sa.Column("conditional", json, nullable=False),
        sa.Column("factors", json, nullable=False),
        sa.Column("allocated_at", utc, nullable=False),
        sa.Column("seq", seq, nullable=False),
    )
    op.create_index("ix_allocations_study", "allocations", ["study", "seq"])


def downgrade() -> None:
    op.drop_index("ix_allocations_study", table_name="allocations")
    op.drop_table("allocations")
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("arm")
        batch.drop_column("study")
