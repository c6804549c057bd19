"""Forms: the participants projection's `forms` column (each form's values, where each came
from, added fields, completed domains, turns), a fold of the form.* events.

Existing rows start empty: no form event existed before this revision, so `{}` is what a
replay rebuilds for them.

Revision ID: 0011
Revises: 0005
Create Date: 2026-11-26
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

revision = '0011'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), 'postgresql')
    with op.batch_alter_table('participants') as batch:
        batch.add_column(sa.Column('forms', json, nullable=False, server_default='{}'))


def downgrade() -> None:
    with op.batch_alter_table('participants') as batch:
        batch.drop_column('forms')
