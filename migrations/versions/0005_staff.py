"""Researcher console accounts: the staff projection, credentials and sign-in throttling.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('staff',
    sa.Column('email', sa.String(length=90), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('added_by', sa.String(length=200), nullable=False),
    sa.Column('added_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('password_set_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_signed_in_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('email', name=op.f('pk_staff'))
    )
    op.create_table('staff_credentials',
    sa.Column('email', sa.String(length=90), nullable=False),
    sa.Column('secret_hash', sa.Text(), nullable=False),
    sa.Column('one_time', sa.Boolean(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('email', name=op.f('pk_staff_credentials'))
    )
    op.create_table('login_throttle',
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('failures', sa.Integer(), nullable=False),
    sa.Column('window_started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('locked_until', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_login_throttle'))
    )


def downgrade() -> None:
    op.drop_table('login_throttle')
    op.drop_table('staff_credentials')
    op.drop_table('staff')
