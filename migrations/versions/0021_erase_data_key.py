"""Keys: `key_checks`, the check value of the database's master key (every process compares
its TANDEM_MASTER_KEY with it at start; written at the first start with a key); and erasing a
data key through one narrow path: on PostgreSQL, `tandem_erase_data_key(pid, at)`,
a SECURITY DEFINER function owned by the schema's owner, is the only way the app role can
destroy a wrapped data key (`tandem migrate --app-role` revokes its UPDATE and DELETE on
`data_keys` and grants EXECUTE on this function). It destroys the key of one participant, and
only of one whose `participant.erased` event is already recorded (in the same transaction), so
no key goes without an event saying who erased it and why. SQLite has no roles: nothing here.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

FUNCTION = """
CREATE OR REPLACE FUNCTION tandem_erase_data_key(pid varchar, at timestamptz)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    done integer;
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM events
        WHERE stream_id = 'participant:' || pid AND event_type = 'participant.erased'
    ) THEN
        RAISE EXCEPTION 'no participant.erased event for %: a data key is destroyed only '
            'with the erasure recorded', pid USING ERRCODE = 'insufficient_privilege';
    END IF;
    UPDATE data_keys SET wrapped = NULL, erased_at = at
        WHERE participant_id = pid AND wrapped IS NOT NULL;
    GET DIAGNOSTICS done = ROW_COUNT;
    IF done = 0 AND NOT EXISTS (SELECT 1 FROM data_keys WHERE participant_id = pid) THEN
        INSERT INTO data_keys (participant_id, wrapped, master_key_id, created_at, erased_at)
            VALUES (pid, NULL, NULL, at, at);
    END IF;
    RETURN done;
END
$$
"""


def upgrade() -> None:
    op.create_table(
        "key_checks",
        sa.Column("name", sa.String(20), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("check_value", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_key_checks")),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(FUNCTION)
    op.execute("REVOKE ALL ON FUNCTION tandem_erase_data_key(varchar, timestamptz) FROM PUBLIC")


def downgrade() -> None:
    op.drop_table("key_checks")
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP FUNCTION IF EXISTS tandem_erase_data_key(varchar, timestamptz)")
