"""The store's ports: the narrow interfaces the rest of the code talks to storage through.

Four of them: the event store (append at an expected version, load a stream), the work queue
(participants' heads and leases, a turn's reads, a turn completed with its events), the outbox
(due rows claimed, outcomes recorded) and named reads (`bot.store.reads`, one function per
purpose). The concrete classes (`EventStore`, `StoreWorkQueue`, `StoreOutbox`) keep the fast
paths (driver cursors, one-flight commits on PostgreSQL) private to the store; nothing above
it builds SQL or asks which database it runs on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

from bot.store.event_store import AppendResult
from bot.store.events import Event, EventData, NewEvent
from bot.store.outbox_claims import Claimed
from bot.store.recent import RecentWindows
from bot.store.work_queue import TurnReads, Within

Row = dict[str, Any]
Send = TypeVar("Send")


class EventStorePort(Protocol):
    """Streams of events: appended atomically at the version decided on, read in order."""

    def append(
        self,
        stream_id: str,
        new_events: Sequence[NewEvent | EventData],
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append to one stream; ConcurrencyError if it moved past `expected_version`."""
        ...

    def load(
        self, stream_id: str, after_version: int = 0, exclude: Sequence[str] = ()
    ) -> list[Event]:
        """A stream's events after `after_version`, in order, without the types `exclude`d."""
        ...

    def version(self, stream_id: str) -> int:
        """The stream's version (0: no events)."""
        ...


class WorkQueue(Protocol):
    """Participants' work items: claimed with leases, read for a turn, completed with it."""

    def pinned(self) -> AbstractContextManager[None]:
        """One connection for a run of claims, reads and commits on this thread."""
        ...

    def heads(self, candidates: int) -> list[Row]:
        """The head items of up to `candidates` participants not taken over, oldest first."""
        ...

    def head(self, participant_id: str) -> Row | None:
        """A participant's first pending item, unless their conversation is taken over."""
        ...

    def acquire(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
        """Take or renew lease `name`; false if another holds it unexpired."""
        ...

    def renew(self, name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
        """`acquire` from another thread than the one working (a heartbeat)."""
        ...

    def release(self, name: str, holder: str) -> None:
        """Give lease `name` up, if `holder` still has it."""
        ...

    def stored_row(self, stream: str) -> Row | None:
        """The participant's row as stored now, if a turn's commit can start from it."""
        ...

    def read_turn(self, item: Row, windows: RecentWindows, history_limit: int) -> TurnReads | None:
        """What `item`'s turn is decided on; None if it is no longer the head item."""
        ...

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
        """Append a turn's decision at `version` and, atomically, read the next head item
        and release `lease` unless it is due: that item if due, else None (released).
        `within` runs in the same transaction after the append."""
        ...


class Outbox(Protocol):
    """Queued messages: due rows claimed with compare-and-set, outcomes recorded."""

    def candidates(self, limit: int, seen: set[str], now: datetime) -> list[Row]:
        """Up to `limit` due rows (the heads of their lanes), none of `seen`."""
        ...

    def claim_and_settle(
        self,
        candidates: list[Row],
        now: datetime,
        verdict: Callable[[Claimed], list[EventData] | Send | None],
    ) -> tuple[int, list[tuple[Claimed, Send]]]:
        """Claim the candidates and record the verdicts that send nothing, in one
        transaction: how many were recorded, and the claimed rows to send."""
        ...

    def record(
        self,
        outcomes: list[tuple[Claimed, list[EventData]]],
        follow_up: Callable[[Row, EventData, Callable[[str], list[Row]]], list[EventData]],
    ) -> int:
        """Record the sends' outcomes and clear their claims, in one transaction."""
        ...
