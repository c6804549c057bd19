"""Researcher console: the staff and takeovers projections, credentials, sign-in throttling.

Revision ID: 0005
Revises: 0003
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0005'
down_revision = '0009'
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
    op.create_table('takeovers',
    sa.Column('participant_id', sa.String(length=36), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('started_by', sa.String(length=200), nullable=False),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ended_by', sa.String(length=200), nullable=True),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('participant_id', name=op.f('pk_takeovers'))
    )
    with op.batch_alter_table('takeovers', schema=None) as batch_op:
        batch_op.create_index('ix_takeovers_status', ['status'], unique=False)

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
    with op.batch_alter_table('takeovers', schema=None) as batch_op:
        batch_op.drop_index('ix_takeovers_status')

    op.drop_table('takeovers')
    op.drop_table('staff')
