"""A participant's last messages: the one read of their stream a turn makes, bounded.

A turn shows the LLM the last `CHAT_HISTORY_LIMIT` messages (bot.conversation.transcript_llm)
and an intervention's templates the same window (`turns()`); everything else a turn decides on
is in projections (bot.conversation.memory, timers). The query walks the partial index of the
stream's window events (ix_events_window: stream_id, stream_version) backwards and stops after
`rows` of them, so its cost does not grow with the stream. A worker process keeps each
participant's window decoded (`RecentWindows`) and reads only what was recorded since.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from sqlalchemy import Connection, and_, bindparam, select, text

from bot.store.event_types.interventions import StepEntered
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.events import Event, key_owner
from bot.store.schema import WINDOW_EVENT_TYPES, WINDOW_PREDICATE, events
from bot.store.sealing import SEALED, Sealer
from bot.store.stored_rows import row_to_event

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
# stream, fetched all of its messages through the index as a bitmap and sorted them (a
# turn's cost growing with the stream).
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
# The window's events recorded after stream version `after` (the newest `n` of them): that
# bound alone, or SQLite walked the index down to `stream_version > 0`, every message of the
# stream, looking for the few after it (a turn's cost growing with the stream).
_SINCE = (
    select(events)
    .where(
        and_(
            events.c.stream_id == bindparam("s"),
            events.c.stream_version > bindparam("after"),
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


@dataclass
class _Window:
    """A stream's window as decoded, read through stream version `through`."""

    events: list[Event]
    through: int
    sealed: bool  # whether any of `events` was opened with the participant's data key


class RecentWindows:
    """This process's decoded windows, by stream: a turn reads and decodes only the window
    events recorded since the participant's last turn here (most turns: the message that
    came in and the reply before it), not all `window_rows(limit)` of them again.

    A recorded event never changes, and a stream's versions are committed in order under its
    lock, so the events up to a version read once are the same ever after. Only opening a
    sealed event can change: once the participant is erased it reads `[erased]`. A window
    holding sealed events is therefore used only while the participant's data key still
    opens, as the store's `Sealer` sees it (another process's erasure reaches it within
    bot.store.sealing.KEY_CACHE_SECONDS, as for every read); otherwise it is read afresh.
    The `streams` most recently used are kept; a window of every message (CHAT_HISTORY_LIMIT
    -1) is never kept."""

    def __init__(self, streams: int = 256) -> None:
        self._streams = streams
        self._windows: OrderedDict[str, _Window] = OrderedDict()
        self._lock = threading.Lock()

    def last_messages(
        self,
        conn: Connection,
        stream_id: str,
        limit: int,
        sealer: Sealer,
        version: int | None = None,
    ) -> list[Event]:
        """`last_messages(conn, stream_id, limit, sealer)`, from the decoded window and the
        window events recorded since; `version`, the stream's version as the caller read it,
        drops a window that claims to be newer (a database restored from a backup)."""
        rows_wanted = window_rows(limit)
        if rows_wanted is None:  # every message ("all"): not kept, it grows with the stream
            return last_messages(conn, stream_id, limit, sealer)
        if rows_wanted == 0:
            return []
        with self._lock:
            known = self._windows.pop(stream_id, None)
        pid = key_owner(stream_id)
        if known is not None and (
            (version is not None and known.through > version)
            or (known.sealed and (pid is None or not sealer.opens(conn, pid)))
        ):
            known = None
        if known is None:  # the whole window, as `last_messages` reads it
            after = 0
            rows = conn.execute(_WINDOW, {"s": stream_id, "n": rows_wanted}).all()
        else:
            after = known.through
            rows = conn.execute(_SINCE, {"s": stream_id, "n": rows_wanted, "after": after}).all()
        fresh = [row_to_event(row, sealer, conn) for row in reversed(rows)]
        window = ([*known.events, *fresh] if known is not None else fresh)[-rows_wanted:]
        sealed = (known is not None and known.sealed) or any(SEALED in row.data for row in rows)
        through = rows[0].stream_version if rows else after
        with self._lock:
            self._windows[stream_id] = _Window(window, through, sealed)
            while len(self._windows) > self._streams:
                self._windows.popitem(last=False)
        return list(window)
