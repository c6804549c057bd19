"""Broadcasts: the `broadcasts` projection (one row per broadcast, from its own stream) and the
`broadcast_recipients` projection (one row per recipient: planned, queued or held).

No broadcast existed before this revision, so empty tables are what a replay rebuilds.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
    seq = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "broadcasts",
        sa.Column("broadcast_id", sa.String(36), primary_key=True),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("whatsapp_template", sa.String(64), nullable=True),
        sa.Column("filter", json, nullable=False),
        sa.Column("send_at", json, nullable=False),
        sa.Column("recipients", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("cancelled_by", sa.String(200), nullable=True),
        sa.Column("cancelled_at", utc, nullable=True),
        sa.Column("seq", seq, nullable=False),
    )
    op.create_index("ix_broadcasts_seq", "broadcasts", ["seq"])
    op.create_table(
        "broadcast_recipients",
        sa.Column("recipient_id", sa.String(80), primary_key=True),
        sa.Column("broadcast_id", sa.String(36), nullable=False),
        sa.Column("participant_id", sa.String(36), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("due_at", utc, nullable=False),
        sa.Column("outbox_id", sa.String(36), nullable=True),
        sa.Column("updated_at", utc, nullable=False),
    )
    op.create_index(
        "ix_broadcast_recipients_status_due_at", "broadcast_recipients", ["status", "due_at"]
    )
    op.create_index(
        "ix_broadcast_recipients_broadcast_id", "broadcast_recipients", ["broadcast_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_broadcast_recipients_broadcast_id", table_name="broadcast_recipients")
    op.drop_index("ix_broadcast_recipients_status_due_at", table_name="broadcast_recipients")
    op.drop_table("broadcast_recipients")
    op.drop_index("ix_broadcasts_seq", table_name="broadcasts")
    op.drop_table("broadcasts")
