"""The work queue behind its port: participants' heads and leases, a turn's reads, its commit.

The worker (bot.runtime.worker) decides turns; this holds how their items are claimed, read
and completed: the same statements and round trips the worker ran itself before, now private
to the store. A turn's completion is one call (`complete_turn`): on PostgreSQL, given the
participant's row as the turn read it, the append is staged before the participant's lock and
sent with the next-item read and the COMMIT in one flight (bot.store.flight); elsewhere it
appends and reads the next item in two steps of one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from bot.store.event_store import ConcurrencyError, EventStore, Transaction
from bot.store.event_types.messages import MessageQueued
from bot.store.event_types.work import WorkCompleted
from bot.store.events import PARTICIPANT_PREFIX, Event, EventData, NewEvent, participant_stream
from bot.store.flight import commit_in_one_flight
from bot.store.leases import acquire, release
from bot.store.projections.columns import fold_of
from bot.store.projections.outbox import PROJECTION as OUTBOX
from bot.store.projections.work_items import PROJECTION as WORK_ITEMS
from bot.store.queries import pending_timers
from bot.store.recent import RecentWindows
from bot.store.schema import events
from bot.store.stored_rows import row_to_event
from bot.store.work_statements import (
    NEXT_OR_RELEASE,
    PARTICIPANT_AND_HEAD,
    TIMER,
    heads,
    next_or_release,
    read_head,
)
from bot.store.writes import select_row

Row = dict[str, Any]
# More of a turn, run in its commit's transaction after its events (a study's stage 2).
Within = Callable[[Transaction], object]


@dataclass(frozen=True)
class TurnReads:
    """What a turn is decided on, read in one snapshot (bot.runtime.worker._turn)."""

    participant: Row  # the participant's row as stored (with `memory`, folded by its column fold)
    timer: Row | None  # a timer item's timer
    pending: list[Row]  # the participant's pending timers
    window: list[Event]  # their last messages (bot.store.recent)
    trigger: Event | None  # the event that made a non-timer item


class StoreWorkQueue:
    """`bot.store.ports.WorkQueue` on an EventStore (SQLite or PostgreSQL)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store

    def pinned(self) -> AbstractContextManager[None]:
        """One pooled connection for a run of reads and commits (`EventStore.pinned`)."""
        return self.store.pinned()

    def heads(self, candidates: int) -> list[Row]:
        """The head items of up to `candidates` participants not taken over, oldest first."""
        with self.store._statements() as conn:
            return heads(candidates).rows(conn, {})

    def head(self, participant_id: str) -> Row | None:
        """A participant's first pending item, unless their conversation is taken over."""
        with self.store._statements() as conn:
            return read_head(conn, participant_id)

    def acquire(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
        """Take or renew a lease on this thread's (pinned) connection, committed by itself."""
        with self.store._statements(writes=True) as conn:
            return acquire(conn, name, holder, now, ttl)

    def renew(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
        """Renew a lease from another thread (the heartbeat): on a connection of its own."""
        return acquire(self.store.engine, name, holder, now, ttl)

    def release(self, name: str, holder: str) -> None:
        """Give a lease up, if `holder` still has it."""
        with self.store.transaction() as tx:
            release(tx.conn, name, holder)

    def stored_row(self, stream: str) -> Row | None:
        """The participant's row as stored now, if a turn's commit can start from it."""
        with self.store._statements() as conn:
            head = select_row(self.store.head_projection, lock=False)
            found = head.rows(conn, {"key": stream.removeprefix(PARTICIPANT_PREFIX)})
        readable = fold_of("memory").readable
        return found[0] if found and readable(found[0].get("memory")) else None

    def read_turn(self, item: Row, windows: RecentWindows, history_limit: int) -> TurnReads | None:
        """What item's turn is decided on, in a fixed number of bounded statements (one read
        transaction on SQLite; on PostgreSQL, whose READ COMMITTED gives each statement its
        own snapshot, without one); None if the item is no longer the participant's head
        (taken over or done meanwhile). The trigger of a message's turn is among the last
        messages; one outside them (an enrollment, a command, an old message retried) is read
        by itself."""
        pid = item["participant_id"]
        stream = participant_stream(pid)
        with self.store._statements() as conn:
            found_rows = PARTICIPANT_AND_HEAD.rows(conn, {"pid": pid})
            participant = found_rows[0] if found_rows else None
            if participant is None:
                head = read_head(conn, pid)
                if head is None or head["work_id"] != item["work_id"]:
                    return None
                raise RuntimeError(f"work item {item['work_id']} names no participant")
            if participant["head_work_id"] != item["work_id"]:
                return None
            trigger: Event | None = None
            timer = None
            if item["kind"] == "timer":
                found = TIMER.rows(conn, {"timer_id": item["ref"]})
                timer = found[0] if found else None
            pending = pending_timers(conn, pid)
            window = windows.last_messages(
                conn,
                stream,
                history_limit,
                self.store.sealer,
                version=int(participant["version"]),
            )
            if item["kind"] != "timer":
                trigger = next((e for e in window if e.event_id == item["ref"]), None)
                if trigger is None:
                    row = conn.execute(
                        select(events).where(events.c.event_id == item["ref"])
                    ).first()
                    trigger = row_to_event(row, self.store.sealer, conn) if row else None
        stored = dict(participant)
        del stored["head_work_id"]
        return TurnReads(stored, timer, pending, window, trigger)

    def complete_turn(
        self,
        stream: str,
        decided: list[EventData | NewEvent],
        version: int,
        item: Row,
        head: Row | None,
        lease: str,
        holder: str,
        now: Callable[[], datetime],
        within: Within | None = None,
    ) -> Row | None:
        """Append a turn's decision at `version` and, in the same transaction, read the
        participant's next head item and release `lease` unless that item is due; the next
        item if due (the lease kept), else None (released). ConcurrencyError if the stream
        moved. On PostgreSQL, given the participant's row as the turn read it (`head`, at
        `version`), the append is worked out before the participant's lock and sent with the
        next-item read and the COMMIT in one flight (bot.store.flight), so that the lock the
        webhook waits for is never held while this low-priority process waits for a core.
        `within` runs in the transaction after the append (a study's stage 2, which reads and
        appends more): such a turn takes the participant's lock and appends, not a flight."""
        pid = stream.removeprefix(PARTICIPANT_PREFIX)
        try:
            with self.store.transaction() as tx:
                _adopt_known_rows(tx, decided, item)
                at = now()
                if within is None and head is not None and tx.conn.dialect.name == "postgresql":
                    staged = tx.stage(stream, decided, version, head)
                    params = {"pid": pid, "name": lease, "holder": holder, "now": at}
                    [found] = commit_in_one_flight(tx, [staged], [(NEXT_OR_RELEASE, params)])
                    following = found[0] if found else None
                else:
                    tx.append(stream, decided, expected_version=version)
                    if within is not None:
                        within(tx)
                    following = next_or_release(tx.conn, pid, lease, holder, at)
                if following is not None and following["available_at"] <= at:
                    return following
        except IntegrityError as exc:  # the unique indexes' backstop, as EventStore.append
            actual = self.store.version(stream)
            raise ConcurrencyError(stream, version, actual) from exc
        return None


def _adopt_known_rows(tx: Transaction, decided: list[EventData | NewEvent], item: Row) -> None:
    """Spare the decision's append two reads of rows it already knows (a round trip each):
    - the work item's: `item` is its row as read while it was the participant's pending head
      (`read_turn` checked that at the version the append expects). Only the participant's own
      events move it, and those appended meanwhile without failing the append are passive
      ones, which create items but settle none; so it is still pending, and `work.completed`
      writes the same status and time as if the row were read again.
    - the outbox rows of the replies it queues: none exists, as each outbox id was drawn at
      random for this turn (`new_id()`, bot.channel.outbound). Were one ever to exist, the
      insert would fail the append (the item stays pending), where a read would have left the
      old row and a reply never sent.
    """
    for decision in decided:
        data = decision.data if isinstance(decision, NewEvent) else decision
        if isinstance(data, WorkCompleted) and data.work_id == item["work_id"]:
            if item.get("status") == "pending":
                tx._adopt_row(WORK_ITEMS, item["work_id"], item)
        elif isinstance(data, MessageQueued):
            tx._adopt_row(OUTBOX, data.outbox_id, None)
