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
    Float,
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
        if value is None or value.tzinfo is UTC:  # PostgreSQL's, in a UTC session
            return value
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


Json = JSON().with_variant(JSONB(), "postgresql")

# The event types of a turn's window of last messages (bot.store.recent): messages both ways
# and where an intervention's steps began. Spelled out as SQL so that the window's query and
# its partial index read the same literal predicate (a planner proves that an index covers a
# query only from constants, never from bound parameters).
WINDOW_EVENT_TYPES = ("message.received", "message.queued", "step.entered")
WINDOW_PREDICATE = "event_type IN ({})".format(", ".join(f"'{t}'" for t in WINDOW_EVENT_TYPES))
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
    # A turn's window of last messages (bot.store.recent) walks this backwards and stops after
    # a fixed number of rows. Without it PostgreSQL's planner intersects the stream's index
    # with the event-type index and sorts every message of the stream (a turn's cost growing
    # with the stream). The predicate must read as the window's WHERE does.
    Index(
        "ix_events_window",
        "stream_id",
        "stream_version",
        sqlite_where=text(WINDOW_PREDICATE),
        postgresql_where=text(WINDOW_PREDICATE),
    ),
)

# A phone number belongs to one participant at a time, unless they left (unenrolled) or were
# erased (their phone then reads `[erased]`, the same for every erased participant).
PHONE_IN_USE = "status NOT IN ('unenrolled', 'erased')"

participants = Table(
    "participants",
    metadata,
    Column("participant_id", String(36), primary_key=True),
    Column("phone", String(16), nullable=False),
    Column("channel", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("intervention", String(100), nullable=False),
    Column("study", String(100), nullable=True),  # studies/<slug>: set by participant.allocated
    Column("arm", String(100), nullable=True),
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
    # bot.conversation.memory: what a turn decides on beyond the columns above (NULL until replayed)
    Column("memory", Json, nullable=True),
    Column("forms", Json, nullable=False, server_default="{}"),
    Column("enrolled_at", UtcDateTime, nullable=False),
    Column("last_inbound_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("version", Integer, nullable=False),
    Index(
        "uq_participants_phone_enrolled",
        "phone",
        unique=True,
        sqlite_where=text(PHONE_IN_USE),
        postgresql_where=text(PHONE_IN_USE),
    ),
    Index("ix_participants_status", "status"),
)

work_items = Table(
    "work_items",
    metadata,
    Column("work_id", String(36), primary_key=True),
    Column("participant_id", String(36), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("ref", String(64), nullable=False),
    Column("seq", Seq, nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("last_error", Text, nullable=True),
    Column("available_at", UtcDateTime, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_work_items_participant_id_status_seq", "participant_id", "status", "seq"),
    Index("ix_work_items_status_available_at", "status", "available_at"),
)

outbox = Table(
    "outbox",
    metadata,
    Column("outbox_id", String(36), primary_key=True),
    Column("participant_id", String(36), nullable=True),
    Column("stream_id", String(100), nullable=False),
    Column("position", Seq, nullable=False),
    Column("to_address", String(64), nullable=False),
    Column("channel", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("body", Text, nullable=True),
    Column("content_sid", String(64), nullable=True),
    Column("content_variables", Json, nullable=True),
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UtcDateTime, nullable=True),
    Column("provider_sid", String(64), nullable=True),
    Column("error_code", Integer, nullable=True),
    Column("error_message", Text, nullable=True),
    Column("queued_at", UtcDateTime, nullable=False),
    Column("sent_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    # Operational (not rebuilt by replay): which dispatcher holds the row while sending it.
    Column("claimed_by", String(100), nullable=True),
    Column("claimed_until", UtcDateTime, nullable=True),
    Index("ix_outbox_status_next_attempt_at", "status", "next_attempt_at"),
    Index("ix_outbox_stream_id_position", "stream_id", "position"),
    Index("ix_outbox_provider_sid", "provider_sid"),
)

timers = Table(
    "timers",
    metadata,
    Column("timer_id", String(36), primary_key=True),
    Column("participant_id", String(36), nullable=True),
    Column("kind", String(32), nullable=False),
    Column("due_at", UtcDateTime, nullable=False),
    Column("status", String(16), nullable=False),
    Column("scope", String(100), nullable=False),
    Column("payload", Json, nullable=False),
    Column("local_time", String(40), nullable=True),
    Column("timezone", String(64), nullable=True),
    Column("scheduled_at", UtcDateTime, nullable=False),
    Column("fired_at", UtcDateTime, nullable=True),
    Column("late_seconds", Float, nullable=True),
    Column("reason", Text, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_timers_status_due_at", "status", "due_at"),
    Index("ix_timers_participant_id_status", "participant_id", "status"),
    Index("ix_timers_updated_at", "updated_at"),  # the scheduler's sweep: what changed since
)

alerts = Table(
    "alerts",
    metadata,
    Column("alert_id", String(36), primary_key=True),
    Column("participant_id", String(36), nullable=True),
    Column("kind", String(32), nullable=False),
    Column("severity", String(16), nullable=False),
    Column("rule", String(100), nullable=True),
    Column("summary", Text, nullable=False),
    Column("notify_supervisors", Boolean, nullable=False),
    Column("status", String(16), nullable=False),
    Column("raised_at", UtcDateTime, nullable=False),
    Column("acknowledged_by", String(200), nullable=True),
    Column("acknowledged_via", String(16), nullable=True),
    Column("acknowledged_at", UtcDateTime, nullable=True),
    Column("resolved_by", String(200), nullable=True),
    Column("resolved_at", UtcDateTime, nullable=True),
    Column("resolution_note", Text, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_alerts_status_raised_at", "status", "raised_at"),
    Index("ix_alerts_participant_id", "participant_id"),
)

staff = Table(
    "staff",
    metadata,
    Column("email", String(90), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("status", String(16), nullable=False),
    Column("added_by", String(200), nullable=False),
    Column("added_at", UtcDateTime, nullable=False),
    Column("password_set_at", UtcDateTime, nullable=True),
    Column("last_signed_in_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
)

allocations = Table(
    "allocations",
    metadata,
    Column("allocation_id", String(80), primary_key=True),  # "<participant_id>:<stage>"
    Column("participant_id", String(36), nullable=False),
    Column("study", String(100), nullable=False),
    Column("stage", Integer, nullable=False),
    Column("arm", String(100), nullable=False),
    Column("first_arm", String(100), nullable=True),
    Column("method", String(16), nullable=False),
    Column("sequence", String(120), nullable=False),
    Column("number", Integer, nullable=False),
    Column("stratum", Text, nullable=False),
    Column("block", Integer, nullable=True),
    Column("block_size", Integer, nullable=True),
    Column("position", Integer, nullable=True),
    Column("probabilities", Json, nullable=False),
    Column("conditional", Json, nullable=False),
    Column("factors", Json, nullable=False),
    Column("allocated_at", UtcDateTime, nullable=False),
    Column("seq", Seq, nullable=False),  # the event's: the order allocations were made in
    Index("ix_allocations_study", "study", "seq"),
)

takeovers = Table(
    "takeovers",
    metadata,
    Column("participant_id", String(36), primary_key=True),
    Column("status", String(16), nullable=False),
    Column("started_by", String(200), nullable=False),
    Column("reason", Text, nullable=True),
    Column("started_at", UtcDateTime, nullable=False),
    Column("ended_by", String(200), nullable=True),
    Column("ended_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_takeovers_status", "status"),
)

# A broadcast (bot.services.broadcasts): what was asked, folded from its own stream.
broadcasts = Table(
    "broadcasts",
    metadata,
    Column("broadcast_id", String(36), primary_key=True),
    Column("created_by", String(200), nullable=False),
    Column("title", Text, nullable=True),
    Column("message", Text, nullable=False),
    Column("whatsapp_template", String(64), nullable=True),
    Column("filter", Json, nullable=False),
    Column("send_at", Json, nullable=False),
    Column("recipients", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # active | cancelled
    Column("created_at", UtcDateTime, nullable=False),
    Column("cancelled_by", String(200), nullable=True),
    Column("cancelled_at", UtcDateTime, nullable=True),
    Column("seq", Seq, nullable=False),
    Column("step", String(100), nullable=True),  # a step to start instead of a message
    Column("schedule", String(200), nullable=True),  # "<study>/<name>@<date>" if declared
    Index("ix_broadcasts_seq", "seq"),
)

# One row per recipient of a broadcast: planned on the broadcast's stream, settled on theirs.
broadcast_recipients = Table(
    "broadcast_recipients",
    metadata,
    Column("recipient_id", String(80), primary_key=True),  # "<broadcast_id>:<participant_id>"
    Column("broadcast_id", String(36), nullable=False),
    Column("participant_id", String(36), nullable=False),
    Column("status", String(16), nullable=False),  # pending | started | queued | held
    Column("reason", Text, nullable=True),
    Column("due_at", UtcDateTime, nullable=False),
    Column("outbox_id", String(36), nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
    Index("ix_broadcast_recipients_status_due_at", "status", "due_at"),
    Index("ix_broadcast_recipients_broadcast_id", "broadcast_id"),
)

# Not a projection: a console account's password (argon2) or first-login code. Secrets are
# never events, which are kept for ever; a new password overwrites the row.
staff_credentials = Table(
    "staff_credentials",
    metadata,
    Column("email", String(90), primary_key=True),
    Column("secret_hash", Text, nullable=False),
    Column("one_time", Boolean, nullable=False),
    Column("expires_at", UtcDateTime, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
)

# Not a projection: failed console sign-ins per email and per client address, for throttling.
login_throttle = Table(
    "login_throttle",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("failures", Integer, nullable=False),
    Column("window_started_at", UtcDateTime, nullable=False),
    Column("locked_until", UtcDateTime, nullable=True),
)

# Not a projection: open console sessions, one row per signed-in browser, keyed by the SHA-256
# of the random token its cookie carries; a row deleted is a session ended (sign-out, password
# change, role change, disable). `via_code`: opened with a first-sign-in code.
console_sessions = Table(
    "console_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("email", String(90), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("last_active_at", UtcDateTime, nullable=False),
    Column("via_code", Boolean, nullable=False),
    Index("ix_console_sessions_email", "email"),
)

# Not a projection: a staff member's TOTP second factor (bot.console.two_factor). `sealed` is
# the secret encrypted under a key derived from the master key, never the secret itself;
# `enabled` false while enrolment awaits its first code; `last_step` the 30-second step of the
# last code accepted, so that a code cannot be used twice.
staff_totp = Table(
    "staff_totp",
    metadata,
    Column("email", String(90), primary_key=True),
    Column("sealed", Text, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("last_step", BigInteger, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

# Not a projection: short-lived leases (a participant's worker, the scheduler leader).
leases = Table(
    "leases",
    metadata,
    Column("name", String(100), primary_key=True),
    Column("holder", String(100), nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
)

# Not a projection: each participant's data key, wrapped by the master key (bot.store.sealing).
# Outside the append-only `events`, so that erasing a participant can destroy it (`wrapped`
# set to NULL); back it up apart from the events (docs/operations.md).
data_keys = Table(
    "data_keys",
    metadata,
    Column("participant_id", String(36), primary_key=True),
    Column("wrapped", Text, nullable=True),
    Column("master_key_id", String(16), nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("erased_at", UtcDateTime, nullable=True),
)

# Not a projection: the check value of the master key the database's data is sealed under
# (one row, written at the first start with a key; `tandem keys rotate` moves it), which
# every process compares with its TANDEM_MASTER_KEY at start (bot.store.key_check).
key_checks = Table(
    "key_checks",
    metadata,
    Column("name", String(20), primary_key=True),
    Column("key_id", String(16), nullable=False),
    Column("check_value", String(64), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

# Not a projection: the keyed hash (HMAC) of each participant's phone number, by which an
# inbound message finds its participant; the row goes when the participant is erased.
participant_phones = Table(
    "participant_phones",
    metadata,
    Column("participant_id", String(36), primary_key=True),
    Column("phone_hmac", String(64), nullable=False),
    Index("ix_participant_phones_phone_hmac", "phone_hmac"),
)

# Not a projection: an unknown sender's phone number as its keyed hash (HMAC under the master
# key, never the number), by which their next message finds their stream (`sender:<id>`) and
# `tandem erase --phone` finds what to erase; dropped when their data key is destroyed.
sender_phones = Table(
    "sender_phones",
    metadata,
    Column("sender_id", String(36), primary_key=True),
    Column("phone_hmac", String(64), nullable=False),
    Index("ix_sender_phones_phone_hmac", "phone_hmac", unique=True),
)

# Projection name -> table. Every projection in bot.store.projections has a table here.
PROJECTION_TABLES: dict[str, Table] = {
    "participants": participants,
    "work_items": work_items,
    "outbox": outbox,
    "timers": timers,
    "alerts": alerts,
    "staff": staff,
    "takeovers": takeovers,
    "allocations": allocations,
    "broadcasts": broadcasts,
    "broadcast_recipients": broadcast_recipients,
}
