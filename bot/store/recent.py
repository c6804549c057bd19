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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BigInteger, Connection, String, and_, bindparam, func, select, text, true
from sqlalchemy.dialects.postgresql import ARRAY

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

# `_SINCE` for many streams at once (PostgreSQL): each stream's newest `n` window events after
# its own version, a lateral walk of ix_events_window backwards per stream, in one statement.
_STREAMS = select(
    func.unnest(bindparam("streams", type_=ARRAY(String))).label("s"),
    func.unnest(bindparam("afters", type_=ARRAY(BigInteger))).label("after"),
).subquery("w")
_EACH = (
    select(events)
    .where(
        and_(
            events.c.stream_id == _STREAMS.c.s,
            events.c.stream_version > _STREAMS.c.after,
            text(WINDOW_PREDICATE),
        )
    )
    .order_by(events.c.stream_version.desc())
    .limit(bindparam("n"))
    .lateral("e")
)
_SINCE_MANY = (
    select(_EACH)
    .select_from(_STREAMS.join(_EACH, true()))
    .order_by(_EACH.c.stream_id, _EACH.c.stream_version.desc())
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
        known, after = self._known(conn, stream_id, sealer, version)
        if known is None:  # the whole window, as `last_messages` reads it
            rows = conn.execute(_WINDOW, {"s": stream_id, "n": rows_wanted}).all()
        else:
            rows = conn.execute(_SINCE, {"s": stream_id, "n": rows_wanted, "after": after}).all()
        return self._keep(conn, stream_id, known, after, rows, rows_wanted, sealer)

    def last_messages_many(
        self, conn: Connection, versions: Mapping[str, int], limit: int, sealer: Sealer
    ) -> dict[str, list[Event]]:
        """`last_messages` of each stream in `versions` (stream -> its version as the caller
        read it), by stream: on PostgreSQL every stream's new window events in one statement
        (a lateral walk of ix_events_window per stream), elsewhere a statement each."""
        rows_wanted = window_rows(limit)
        if rows_wanted is None or rows_wanted == 0 or conn.dialect.name != "postgresql":
            return {s: self.last_messages(conn, s, limit, sealer, v) for s, v in versions.items()}
        known = {s: self._known(conn, s, sealer, v) for s, v in versions.items()}
        streams = list(known)
        found: dict[str, list[Any]] = {s: [] for s in streams}
        if streams:
            params = {"streams": streams, "afters": [known[s][1] for s in streams]}
            for row in conn.execute(_SINCE_MANY, {**params, "n": rows_wanted}):
                found[row.stream_id].append(row)
        return {
            s: self._keep(conn, s, known[s][0], known[s][1], found[s], rows_wanted, sealer)
            for s in streams
        }

    def _known(
        self, conn: Connection, stream_id: str, sealer: Sealer, version: int | None
    ) -> tuple[_Window | None, int]:
        """The stream's decoded window, if it can be used (taken out of the cache), and the
        stream version after which its window events are to be read."""
        with self._lock:
            known = self._windows.pop(stream_id, None)
        pid = key_owner(stream_id)
        if known is not None and (
            (version is not None and known.through > version)
            or (known.sealed and (pid is None or not sealer.opens(conn, pid)))
        ):
            known = None
        return known, (0 if known is None else known.through)

    def _keep(
        self,
        conn: Connection,
        stream_id: str,
        known: _Window | None,
        after: int,
        rows: Sequence[Any],
        rows_wanted: int,
        sealer: Sealer,
    ) -> list[Event]:
        """The window: `known`'s events and `rows` (the window events after `after`, newest
        first) decoded; kept for the stream's next turn."""
        fresh = [row_to_event(row, sealer, conn) for row in reversed(rows)]
        window = ([*known.events, *fresh] if known is not None else fresh)[-rows_wanted:]
        sealed = (known is not None and known.sealed) or any(SEALED in row.data for row in rows)
        through = rows[0].stream_version if rows else after
        with self._lock:
            self._windows[stream_id] = _Window(window, through, sealed)
            while len(self._windows) > self._streams:
                self._windows.popitem(last=False)
        return list(window)
