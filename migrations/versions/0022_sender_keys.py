"""Unknown senders' keys: `sender_phones` (an unknown sender's number as its keyed hash, by which
their messages are found on their own `sender:<id>` stream, sealed under a data key of their
own in `data_keys`), and `tandem_erase_data_key` (migration 0021) extended to destroy such a
key too: still only with the erasure recorded in the same transaction, `sender.erased` on the
sender's stream as `participant.erased` on a participant's. The app role keeps no UPDATE or
DELETE on `data_keys` (`tandem migrate --app-role`).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def _function(erased_where: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION tandem_erase_data_key(pid varchar, at timestamptz)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = public, pg_temp
AS $$
DECLARE
    done integer;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM events WHERE {erased_where}) THEN
        RAISE EXCEPTION 'no participant.erased event (nor sender.erased) for %: a data key is '
            'destroyed only with the erasure recorded', pid
            USING ERRCODE = 'insufficient_privilege';
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


PARTICIPANT = "stream_id = 'participant:' || pid AND event_type = 'participant.erased'"
EITHER = (
    f"({PARTICIPANT}) OR (stream_id = 'sender:' || pid AND event_type = 'sender.erased')"
)


def upgrade() -> None:
    op.create_table(
        "sender_phones",
        sa.Column("sender_id", sa.String(36), nullable=False),
        sa.Column("phone_hmac", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("sender_id", name=op.f("pk_sender_phones")),
    )
    op.create_index(
        "ix_sender_phones_phone_hmac", "sender_phones", ["phone_hmac"], unique=True
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_function(EITHER))  # CREATE OR REPLACE keeps the grants on it


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_function(PARTICIPANT))
    op.drop_index("ix_sender_phones_phone_hmac", table_name="sender_phones")
    op.drop_table("sender_phones")
