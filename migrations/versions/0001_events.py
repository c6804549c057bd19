"""The append-only events table (with triggers refusing UPDATE and DELETE) and participants.

Revision ID: 0001
Revises: 
Create Date: 2026-11-25
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('events',
    sa.Column('seq', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('event_id', sa.String(length=36), nullable=False),
    sa.Column('stream_id', sa.String(length=100), nullable=False),
    sa.Column('stream_version', sa.Integer(), nullable=False),
    sa.Column('event_type', sa.String(length=64), nullable=False),
    sa.Column('schema_version', sa.SmallInteger(), nullable=False),
    sa.Column('data', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('meta', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('idempotency_key', sa.String(length=200), nullable=True),
    sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('seq', name=op.f('pk_events')),
    sa.UniqueConstraint('event_id', name=op.f('uq_events_event_id')),
    sa.UniqueConstraint('stream_id', 'stream_version', name=op.f('uq_events_stream_id_stream_version'))
    )
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.create_index('ix_events_event_type_seq', ['event_type', 'seq'], unique=False)
        batch_op.create_index('ix_events_recorded_at', ['recorded_at'], unique=False)
        batch_op.create_index('uq_events_stream_id_idempotency_key', ['stream_id', 'idempotency_key'], unique=True, sqlite_where=sa.text('idempotency_key IS NOT NULL'), postgresql_where=sa.text('idempotency_key IS NOT NULL'))

    _append_only_triggers()

    op.create_table('participants',
    sa.Column('participant_id', sa.String(length=36), nullable=False),
    sa.Column('phone', sa.String(length=16), nullable=False),
    sa.Column('channel', sa.String(length=16), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('intervention', sa.String(length=100), nullable=False),
    sa.Column('conversation_state', sa.String(length=64), nullable=False),
    sa.Column('current_step', sa.String(length=200), nullable=True),
    sa.Column('name', sa.Text(), nullable=True),
    sa.Column('gender', sa.Text(), nullable=True),
    sa.Column('ethnicity', sa.Text(), nullable=True),
    sa.Column('background', sa.Text(), nullable=True),
    sa.Column('debug', sa.Boolean(), nullable=False),
    sa.Column('opted_out', sa.Boolean(), nullable=False),
    sa.Column('profile', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('step_counters', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('judgements', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('notes', sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql'), nullable=False),
    sa.Column('enrolled_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_inbound_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('participant_id', name=op.f('pk_participants'))
    )
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.create_index('ix_participants_status', ['status'], unique=False)
        batch_op.create_index('uq_participants_phone_enrolled', ['phone'], unique=True, sqlite_where=sa.text("status <> 'unenrolled'"), postgresql_where=sa.text("status <> 'unenrolled'"))



def downgrade() -> None:
    _drop_append_only_triggers()
    with op.batch_alter_table('participants', schema=None) as batch_op:
        batch_op.drop_index('uq_participants_phone_enrolled', sqlite_where=sa.text("status <> 'unenrolled'"), postgresql_where=sa.text("status <> 'unenrolled'"))
        batch_op.drop_index('ix_participants_status')

    op.drop_table('participants')
    with op.batch_alter_table('events', schema=None) as batch_op:
        batch_op.drop_index('uq_events_stream_id_idempotency_key', sqlite_where=sa.text('idempotency_key IS NOT NULL'), postgresql_where=sa.text('idempotency_key IS NOT NULL'))
        batch_op.drop_index('ix_events_recorded_at')
        batch_op.drop_index('ix_events_event_type_seq')

    op.drop_table('events')


REFUSE = "events are append-only: {} refused"


def _append_only_triggers() -> None:
    """Make the database itself refuse UPDATE and DELETE (and TRUNCATE) on events."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION tandem_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'events are append-only: % refused', TG_OP; END $$"
        )
        op.execute(
            "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
            "FOR EACH ROW EXECUTE FUNCTION tandem_events_append_only()"
        )
        op.execute(
            "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
            "FOR EACH STATEMENT EXECUTE FUNCTION tandem_events_append_only()"
        )
    else:
        for action in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER events_no_{action.lower()} BEFORE {action} ON events "
                f"BEGIN SELECT RAISE(ABORT, '{REFUSE.format(action)}'); END"
            )


def _drop_append_only_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS events_no_truncate ON events")
        op.execute("DROP TRIGGER IF EXISTS events_append_only ON events")
        op.execute("DROP FUNCTION IF EXISTS tandem_events_append_only()")
    else:
        op.execute("DROP TRIGGER IF EXISTS events_no_update")
        op.execute("DROP TRIGGER IF EXISTS events_no_delete")
