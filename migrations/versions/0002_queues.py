"""The work queue, the outbox, durable timers and leases (projections, except leases).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('leases',
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('holder', sa.String(length=100), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_leases'))
    )
    op.create_table('outbox',
    sa.Column('outbox_id', sa.String(length=36), nullable=False),
    sa.Column('participant_id', sa.String(length=36), nullable=True),
    sa.Column('stream_id', sa.String(length=100), nullable=False),
    sa.Column('position', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('to_address', sa.String(length=64), nullable=False),
    sa.Column('channel', sa.String(length=16), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('content_sid', sa.String(length=64), nullable=True),
    sa.Column('content_variables', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('provider_sid', sa.String(length=64), nullable=True),
    sa.Column('error_code', sa.Integer(), nullable=True),
    sa.Column('error_message', sa.Text(), nullable=True),
    sa.Column('queued_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('claimed_by', sa.String(length=100), nullable=True),
    sa.Column('claimed_until', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('outbox_id', name=op.f('pk_outbox'))
    )
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.create_index('ix_outbox_provider_sid', ['provider_sid'], unique=False)
        batch_op.create_index('ix_outbox_status_next_attempt_at', ['status', 'next_attempt_at'], unique=False)
        batch_op.create_index('ix_outbox_stream_id_position', ['stream_id', 'position'], unique=False)

    op.create_table('timers',
    sa.Column('timer_id', sa.String(length=36), nullable=False),
    sa.Column('participant_id', sa.String(length=36), nullable=True),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('scope', sa.String(length=100), nullable=False),
    sa.Column('payload', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('local_time', sa.String(length=40), nullable=True),
    sa.Column('timezone', sa.String(length=64), nullable=True),
    sa.Column('scheduled_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('fired_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('late_seconds', sa.Float(), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('timer_id', name=op.f('pk_timers'))
    )
    with op.batch_alter_table('timers', schema=None) as batch_op:
        batch_op.create_index('ix_timers_participant_id_status', ['participant_id', 'status'], unique=False)
        batch_op.create_index('ix_timers_status_due_at', ['status', 'due_at'], unique=False)

    op.create_table('work_items',
    sa.Column('work_id', sa.String(length=36), nullable=False),
    sa.Column('participant_id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('ref', sa.String(length=64), nullable=False),
    sa.Column('seq', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('available_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('work_id', name=op.f('pk_work_items'))
    )
    with op.batch_alter_table('work_items', schema=None) as batch_op:
        batch_op.create_index('ix_work_items_participant_id_status_seq', ['participant_id', 'status', 'seq'], unique=False)
        batch_op.create_index('ix_work_items_status_available_at', ['status', 'available_at'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('work_items', schema=None) as batch_op:
        batch_op.drop_index('ix_work_items_status_available_at')
        batch_op.drop_index('ix_work_items_participant_id_status_seq')

    op.drop_table('work_items')
    with op.batch_alter_table('timers', schema=None) as batch_op:
        batch_op.drop_index('ix_timers_status_due_at')
        batch_op.drop_index('ix_timers_participant_id_status')

    op.drop_table('timers')
    with op.batch_alter_table('outbox', schema=None) as batch_op:
        batch_op.drop_index('ix_outbox_stream_id_position')
        batch_op.drop_index('ix_outbox_status_next_attempt_at')
        batch_op.drop_index('ix_outbox_provider_sid')

    op.drop_table('outbox')
    op.drop_table('leases')
