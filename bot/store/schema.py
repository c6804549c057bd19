"""Tables: the append-only `events` table and the projections kept from it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UtcDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every engine; naive values are refused, not guessed."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise ValueError(f"naive or non-datetime value {value!r} for a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


Json = JSON().with_variant(JSONB(), "postgresql")
Seq = BigInteger().with_variant(Integer(), "sqlite")

events = Table(
    "events",
    metadata,
    Column("seq", Seq, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=False, unique=True),
    Column("stream_id", String(100), nullable=False),
    Column("stream_version", Integer, nullable=False),
    Column("event_type", String(64), nullable=False),
    Column("schema_version", SmallInteger, nullable=False),
    Column("data", Json, nullable=False),
    Column("meta", Json, nullable=False),
    Column("idempotency_key", String(200), nullable=True),
    Column("occurred_at", UtcDateTime, nullable=False),
    Column("recorded_at", UtcDateTime, nullable=False),
    UniqueConstraint("stream_id", "stream_version"),
    Index(
        "uq_events_stream_id_idempotency_key",
        "stream_id",
        "idempotency_key",
        unique=True,
        sqlite_where=text("idempotency_key IS NOT NULL"),
        postgresql_where=text("idempotency_key IS NOT NULL"),
    ),
    Index("ix_events_event_type_seq", "event_type", "seq"),
    Index("ix_events_recorded_at", "recorded_at"),
)

participants = Table(
    "participants",
    metadata,
    Column("participant_id", String(36), primary_key=True),
    Column("phone", String(16), nullable=False),
    Column("channel", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("intervention", String(100), nullable=False),
    Column("conversation_state", String(64), nullable=False),
    Column("current_step", String(200), nullable=True),
    Column("name", Text, nullable=True),
    Column("gender", Text, nullable=True),
    Column("ethnicity", Text, nullable=True),
    Column("background", Text, nullable=True),
    Column("debug", Boolean, nullable=False),
    Column("opted_out", Boolean, nullable=False),
    Column("profile", Json, nullable=False),
    Column("step_counters", Json, nullable=False),
    Column("judgements", Json, nullable=False),
    Column("notes", Json, nullable=False),
    Column("enrolled_at", UtcDateTime, nullable=False),
    Column("last_inbound_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("version", Integer, nullable=False),
    Index(
        "uq_participants_phone_enrolled",
        "phone",
        unique=True,
        sqlite_where=text("status <> 'unenrolled'"),
        postgresql_where=text("status <> 'unenrolled'"),
    ),
    Index("ix_participants_status", "status"),
)

# Projection name -> table. Every projection in bot.projections has a table here.
PROJECTION_TABLES: dict[str, Table] = {"participants": participants}
