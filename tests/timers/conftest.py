"""A timers harness: a store with a fake clock, the firing path, and a stand-in worker."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import and_, select

from bot.conversation.timer_turns import handle_fired
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageSent
from bot.store.event_types.work import WorkCompleted
from bot.store.events import Event, EventData, NewEvent, participant_stream
from bot.store.schema import outbox, timers, work_items
from bot.timers.firing import Decision, FiringPolicy, fire_due
from bot.timers.reactions import on_inbound
from tests.factories import enrolled, received

_PHONES = itertools.count(random.randrange(10**4))

INACTIVE = {"unenrolled", "paused", "completed", "withdrawn"}


class Harness:
    """Drives timers the way production does, with the clock in the test's hands."""

    def __init__(self, store: EventStore, clock: FakeClock, policy: FiringPolicy) -> None:
        self.store = store
        self.clock = clock
        self.policy = policy
        self._sids = 0
        # Whether the stand-in dispatcher sends what the worker queued (False: everything is
        # held, as WhatsApp's closed window holds it).
        self.sending = True

    def enroll(self, timezone: str = "America/Toronto", **changes: Any) -> dict[str, Any]:
        # Distinct numbers (random ones collided: a test enrolling 40 met a duplicate 1 in 12).
        phone = f"+1415555{next(_PHONES) % 10**4:04d}"
        data = enrolled(phone=phone, timezone=timezone, **changes)
        self.store.append(participant_stream(data.participant_id), [data])
        return self.participant(data.participant_id)

    def participant(self, participant_id: str) -> dict[str, Any]:
        row = self.store.projection_row("participants", participant_id)
        assert row is not None
        return row

    def append(self, participant_id: str, events: Sequence[EventData]) -> list[Event]:
        if not events:
            return []
        return self.store.append(participant_stream(participant_id), list(events)).events

    def receive(self, participant_id: str, body: str = "done") -> Event:
        self._sids += 1
        return self.append(participant_id, [received(f"SM{self._sids:06d}", body=body)])[0]

    def events(self, participant_id: str, *types: str) -> list[Event]:
        loaded = self.store.load(participant_stream(participant_id))
        return [e for e in loaded if not types or e.event_type in types]

    def timers(self, participant_id: str, status: str | None = None) -> list[dict[str, Any]]:
        query = select(timers).where(timers.c.participant_id == participant_id)
        if status is not None:
            query = query.where(timers.c.status == status)
        with self.store.reading() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(timers.c.due_at))]

    def timer(self, timer_id: str) -> dict[str, Any]:
        row = self.store.projection_row("timers", timer_id)
        assert row is not None
        return row

    def fire(self) -> list[Decision]:
        return fire_due(self.store, self.clock.now(), self.policy)

    def pending_work(self, kind: str = "timer") -> list[dict[str, Any]]:
        query = select(work_items).where(
            and_(work_items.c.status == "pending", work_items.c.kind == kind)
        )
        with self.store.reading() as conn:
            return [dict(r._mapping) for r in conn.execute(query.order_by(work_items.c.seq))]

    def work(self) -> int:
        """Handle every pending work item, in order, as the worker will."""
        query = (
            select(work_items)
            .where(and_(work_items.c.status == "pending"))
            .order_by(work_items.c.seq)
        )
        with self.store.reading() as conn:
            items = [dict(r._mapping) for r in conn.execute(query)]
        for item in items:
            self._process(item)
        if self.sending:
            self.send()
        return len(items)

    def send(self) -> int:
        """Record every pending outbox row as sent, as the dispatcher would."""
        query = select(outbox).where(outbox.c.status == "pending").order_by(outbox.c.position)
        with self.store.reading() as conn:
            rows = [dict(r._mapping) for r in conn.execute(query)]
        for row in rows:
            self._sids += 1
            sent = MessageSent(outbox_id=row["outbox_id"], provider_sid=f"SMout{self._sids:06d}")
            self.store.append(row["stream_id"], [sent])
        return len(rows)

    def _process(self, item: dict[str, Any]) -> None:
        pid = item["participant_id"]
        participant = self.participant(pid)
        now = self.clock.now()
        decided: list[EventData] = []
        if participant["status"] in INACTIVE:
            decided.append(WorkCompleted(work_id=item["work_id"], skipped=participant["status"]))
        elif item["kind"] == "timer":
            timer = self.store.projection_row("timers", item["ref"])
            decided += handle_fired(participant, timer, self.events(pid), now)
        elif item["kind"] == "inbound":
            inbound = next(e for e in self.events(pid) if e.event_id == item["ref"])
            decided += on_inbound(participant, self.timers(pid, "scheduled"), now, inbound)
        decided.append(WorkCompleted(work_id=item["work_id"]))
        stream = participant_stream(pid)
        self.store.append(stream, [NewEvent(e) for e in decided])

    def step(self, delta: timedelta) -> None:
        """Let `delta` pass, then fire what is due and let the worker handle it."""
        self.clock.advance(delta)
        self.fire()
        self.work()

    def run_until(self, end: datetime, tick: timedelta = timedelta(minutes=10)) -> None:
        while self.clock.now() + tick <= end:
            self.step(tick)


@pytest.fixture
def policy() -> FiringPolicy:
    return FiringPolicy()


@pytest.fixture
def harness(store: EventStore, clock: FakeClock, policy: FiringPolicy) -> Iterator[Harness]:
    yield Harness(store, clock, policy)
