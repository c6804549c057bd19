"""Staff TOTP: the `staff_totp` table, one row per staff member with a second factor (or one
being enrolled): the secret sealed under the master key, and the last code's time step.

Revision ID: 0025
Revises: 0028
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "staff_totp",
        sa.Column("email", sa.String(90), nullable=False),
        sa.Column("sealed", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("last_step", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("email", name=op.f("pk_staff_totp")),
    )


def downgrade() -> None:
    op.drop_table("staff_totp")
