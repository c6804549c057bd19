"""Crypto-shredding: per-participant data keys, the phone lookup by keyed hash, and erased
participants' phones left out of the one-participant-per-phone index.

Revision ID: 0013
Revises: 0011
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('data_keys',
    sa.Column('participant_id', sa.String(length=36), nullable=False),
    sa.Column('wrapped', sa.Text(), nullable=True),
    sa.Column('master_key_id', sa.String(length=16), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('erased_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('participant_id', name=op.f('pk_data_keys'))
    )
    op.create_table('participant_phones',
    sa.Column('participant_id', sa.String(length=36), nullable=False),
    sa.Column('phone_hmac', sa.String(length=64), nullable=False),
    sa.PrimaryKeyConstraint('participant_id', name=op.f('pk_participant_phones'))
    )
    with op.batch_alter_table('participant_phones', schema=None) as batch_op:
        batch_op.create_index('ix_participant_phones_phone_hmac', ['phone_hmac'], unique=False)
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.drop_index('uq_participants_phone_enrolled')
        batch_op.create_index(
            'uq_participants_phone_enrolled', ['phone'], unique=True,
            sqlite_where=sa.text("status NOT IN ('unenrolled', 'erased')"),
            postgresql_where=sa.text("status NOT IN ('unenrolled', 'erased')"),
        )


def downgrade() -> None:
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.drop_index('uq_participants_phone_enrolled')
        batch_op.create_index(
            'uq_participants_phone_enrolled', ['phone'], unique=True,
            sqlite_where=sa.text("status <> 'unenrolled'"),
            postgresql_where=sa.text("status <> 'unenrolled'"),
        )
    with op.batch_alter_table('participant_phones', schema=None) as batch_op:
        batch_op.drop_index('ix_participant_phones_phone_hmac')
    op.drop_table('participant_phones')
    op.drop_table('data_keys')
