"""A participant's last messages: the one read of their stream a turn makes, bounded.

A turn shows the LLM the last `CHAT_HISTORY_LIMIT` messages (bot.conversation.transcript_llm)
and an intervention's templates the same window (`turns()`); everything else a turn decides on
is in projections (bot.store.memory, timers). The query walks the partial index of the
stream's window events (ix_events_window: stream_id, stream_version) backwards and stops after
`rows` of them, so its cost does not grow with the stream.
"""

from __future__ import annotations

from sqlalchemy import Connection, and_, bindparam, select, text

from bot.store.event_store import row_to_event
from bot.store.event_types.interventions import StepEntered
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.events import Event
from bot.store.schema import WINDOW_EVENT_TYPES, WINDOW_PREDICATE, events
from bot.store.sealing import Sealer

# The window's events: messages both ways, and where an intervention's steps began (which
# step said what). Supervisor and debug texts are message.queued too and take room in it, as
# do the parts of a long message sent in several, so a window of `limit` messages reads twice
# as many events (`window_rows`).
WINDOW_TYPES = (MessageReceived.event_type, MessageQueued.event_type, StepEntered.event_type)
if WINDOW_TYPES != WINDOW_EVENT_TYPES:  # the partial index ix_events_window is built on those
    raise RuntimeError(f"window types {WINDOW_TYPES} differ from the schema's index predicate")

# The literal predicate (not bound parameters) lets the planner use the partial index
# ix_events_window: walked backwards, it stops after `n` rows whatever the stream's length.
# `stream_version > 0` (always true) keeps PostgreSQL on that ordered walk before it has
# statistics: without it, at 100,000 events in a fresh table, it guessed a few rows for the
# stream, fetched all 40,000 of its messages through the index as a bitmap and sorted them
# (20 ms a turn, growing with the stream).
_WINDOW = (
    select(events)
    .where(
        and_(
            events.c.stream_id == bindparam("s"),
            events.c.stream_version > 0,
            text(WINDOW_PREDICATE),
        )
    )
    .order_by(events.c.stream_version.desc())
    .limit(bindparam("n"))
)


def window_rows(limit: int) -> int | None:
    """How many events a window of `limit` messages reads; None (every message of the
    stream, a cost that grows with it) for CHAT_HISTORY_LIMIT=-1, "all"."""
    if limit < 0:
        return None
    return 2 * limit


def last_messages(
    conn: Connection, stream_id: str, limit: int, sealer: Sealer | None = None
) -> list[Event]:
    """The stream's last message (and step.entered) events, oldest first; at most
    `window_rows(limit)` of them. `sealer` opens their sealed personal fields."""
    rows_wanted = window_rows(limit)
    if rows_wanted == 0:
        return []
    query = _WINDOW if rows_wanted is not None else _WINDOW.limit(None)
    rows = conn.execute(query, {"s": stream_id, "n": rows_wanted}).all()
    return [row_to_event(row, sealer, conn) for row in reversed(rows)]
