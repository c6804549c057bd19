"""Console sessions: the `console_sessions` table, one row per signed-in browser, so that a
session can be ended on the server (sign-out, password change, role change, disable).

An operational table like `login_throttle`, not a projection: no event rebuilds it, and a
database upgraded to this revision starts with no session (everyone signs in again).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    utc = sa.DateTime(timezone=True)
    op.create_table(
        "console_sessions",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("email", sa.String(90), nullable=False),
        sa.Column("created_at", utc, nullable=False),
        sa.Column("last_active_at", utc, nullable=False),
        sa.Column("via_code", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_console_sessions")),
    )
    op.create_index("ix_console_sessions_email", "console_sessions", ["email"])


def downgrade() -> None:
    op.drop_index("ix_console_sessions_email", table_name="console_sessions")
    op.drop_table("console_sessions")
