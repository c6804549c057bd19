"""The worker: claims a participant's queue with a lease and drains it in order, a turn per item.

Per participant, work is strictly serial and in arrival order (by the seq of the event that
created it); across participants it runs in parallel in as many threads and processes as run.
A turn is computed with no transaction open; its events and `work.completed` are appended in
one transaction at the version the turn was decided on. If only passive events (a message
arriving, a delivery report) came in meanwhile, the decision stands and is appended at the new
version; otherwise the turn is decided once more. A crash loses nothing: the item stays pending
and is taken again when the lease expires.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from sqlalchemy import and_, exists, func, select

from bot.conversation.turns import Handler, Turn
from bot.store.event_store import ConcurrencyError, row_to_event
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.work import WorkCompleted, WorkFailed, WorkParked
from bot.store.events import Event, EventData, NewEvent, new_id, participant_stream
from bot.store.leases import acquire, release
from bot.store.schema import events, participants, takeovers, timers, work_items
from bot.store.services import Services

log = logging.getLogger(__name__)

# Events that others may append to a stream while a turn is being decided, without
# invalidating the decision: arrivals and delivery bookkeeping.
PASSIVE = {
    "message.received",
    "message.status",
    "message.sent",
    "message.failed",
    "message.suppressed",
    "message.deferred",
    "timer.fired",
    "timer.deferred",
    "timer.skipped",
    "work.requested",
}
INACTIVE = {"unenrolled", "paused", "completed", "withdrawn", "erased"}
# A participant whose conversation a staff member took over (bot.console): their items wait,
# pending, until the hand-back (`takeover.ended`).
NOT_TAKEN_OVER = ~exists().where(
    and_(
        takeovers.c.participant_id == work_items.c.participant_id,
        takeovers.c.status == "active",
    )
)
# Records no turn decision reads: the LLM's prompts and answers (most of a long stream's
# bytes), tool call records and delivery bookkeeping. A turn's history leaves them out, so that
# a participant with 10,000 events does not decode every stored prompt on each turn
# (bench/turn.py: ~300 ms -> ~70 ms a turn). A handler that needs one of them must load it.
# message.sent stays in: a question is open only once it was sent (bot.store.delivery).
NOT_IN_TURN_HISTORY = (
    "llm.called",
    "tool.called",
    "tool.failed",
    "work.completed",
    "message.status",
)


class Worker:
    """Drains participants' work queues through a handler."""

    def __init__(
        self,
        services: Services,
        handler: Handler,
        name: str,
        *,
        lease: timedelta = timedelta(seconds=60),
        max_attempts: int = 3,
        backoff: timedelta = timedelta(seconds=5),
        max_backoff: timedelta = timedelta(minutes=5),
    ) -> None:
        self.services = services
        self.store = services.store
        self.handler = handler
        self.name = name
        self.lease = lease
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff

    def run_forever(self, stop: threading.Event, idle_wait: float = 0.5) -> None:
        """Work until `stop` is set; sleep on the work wake-up when nothing is due."""
        while not stop.is_set():
            try:
                done = self.run_once()
            except Exception:  # noqa: BLE001 - the loop's one broad except: log and go on
                log.exception("worker %s: loop error", self.name)
                done = 0
            if not done:
                self.services.signals.work.wait(idle_wait)

    def run_once(self, candidates: int = 20) -> int:
        """Claim one participant with due work and drain it; returns the items handled."""
        now = self.services.clock.now()
        query = (
            select(work_items.c.participant_id, func.min(work_items.c.seq).label("first"))
            .where(and_(work_items.c.status == "pending", NOT_TAKEN_OVER))
            .group_by(work_items.c.participant_id)
            .order_by("first")
            .limit(candidates)
        )
        with self.store.reading() as conn:
            rows = conn.execute(query).all()
        for row in rows:
            head = self._head(row.participant_id)
            if head is None or head["available_at"] > now:
                continue
            if acquire(
                self.store.engine, _lease_name(row.participant_id), self.name, now, self.lease
            ):
                try:
                    return self.drain(row.participant_id)
                finally:
                    release(self.store.engine, _lease_name(row.participant_id), self.name)
        return 0

    def drain(self, participant_id: str) -> int:
        """Handle a claimed participant's due items in order, renewing the lease as it goes."""
        handled = 0
        while True:
            now = self.services.clock.now()
            item = self._head(participant_id)
            if item is None or item["available_at"] > now:
                return handled
            if not acquire(
                self.store.engine, _lease_name(participant_id), self.name, now, self.lease
            ):
                log.warning("worker %s lost the lease of participant %s", self.name, participant_id)
                return handled
            self.process(item)
            handled += 1

    def process(self, item: dict[str, Any]) -> None:
        """One turn: decide, then append the decision with `work.completed`, atomically."""
        with self._heartbeat(item["participant_id"]):
            self._process(item)

    @contextmanager
    def _heartbeat(self, participant_id: str) -> Iterator[None]:
        """Keep renewing the lease while a turn runs: LLM calls can outlast one lease."""
        done = threading.Event()
        every = self.lease.total_seconds() / 3

        def renew() -> None:
            while not done.wait(every):
                now = self.services.clock.now()
                if not acquire(
                    self.store.engine, _lease_name(participant_id), self.name, now, self.lease
                ):
                    log.warning(
                        "worker %s could not renew the lease of participant %s",
                        self.name,
                        participant_id,
                    )
                    return

        beat = threading.Thread(target=renew, name=f"{self.name}-heartbeat", daemon=True)
        beat.start()
        try:
            yield
        finally:
            done.set()
            beat.join()

    def _process(self, item: dict[str, Any]) -> None:
        stream = participant_stream(item["participant_id"])
        for attempt in (1, 2):
            if self._head(item["participant_id"]) is None:
                return  # taken over (or done) meanwhile: the item waits, still pending
            turn, version = self._turn(item)
            try:
                decided = self._decide(turn)
            except Exception as exc:  # noqa: BLE001 - a failing turn must not stop the queue
                log.exception("work item %s (%s) failed", item["work_id"], item["kind"])
                self._fail(item, f"{type(exc).__name__}: {exc}")
                return
            try:
                self._commit(stream, decided, version)
                return
            except ConcurrencyError as exc:
                if attempt == 2:
                    self._fail(item, "the participant's stream kept changing during the turn")
                    return
                log.info("work item %s: %s; deciding again", item["work_id"], exc)

    def _decide(self, turn: Turn) -> list[EventData | NewEvent]:
        status = turn.participant["status"]
        if status in INACTIVE:
            return [WorkCompleted(work_id=turn.item["work_id"], skipped=status)]
        out = list(self.handler(turn))
        return [*out, WorkCompleted(work_id=turn.item["work_id"])]

    def _commit(self, stream: str, decided: list[EventData | NewEvent], version: int) -> None:
        try:
            self.store.append(stream, decided, expected_version=version)
        except ConcurrencyError:
            moved = self.store.load(stream, after_version=version)
            if any(not _passive(e) for e in moved):
                raise
            self.store.append(stream, decided, expected_version=moved[-1].stream_version)

    def _fail(self, item: dict[str, Any], error: str) -> None:
        now = self.services.clock.now()
        attempt = int(item["attempts"]) + 1
        stream = participant_stream(item["participant_id"])
        if attempt >= self.max_attempts:
            parked: list[EventData] = [
                WorkParked(work_id=item["work_id"], error=error[:2000], attempts=attempt),
                AlertRaised(
                    alert_id=new_id(),
                    kind="work_parked",
                    severity="critical",
                    summary=f"work item {item['work_id']} ({item['kind']}) failed "
                    f"{attempt} times and was parked: {error[:300]}",
                ),
            ]
            self.store.append(stream, parked)
            log.error("work item %s parked after %d attempts", item["work_id"], attempt)
            return
        delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
        jitter = delay * random.uniform(0, 0.25)
        self.store.append(
            stream,
            [
                WorkFailed(
                    work_id=item["work_id"],
                    error=error[:2000],
                    attempt=attempt,
                    retry_at=now + delay + jitter,
                )
            ],
        )

    def _head(self, participant_id: str) -> dict[str, Any] | None:
        query = (
            select(work_items)
            .where(
                and_(
                    work_items.c.participant_id == participant_id,
                    work_items.c.status == "pending",
                    NOT_TAKEN_OVER,
                )
            )
            .order_by(work_items.c.seq)
            .limit(1)
        )
        with self.store.reading() as conn:
            row = conn.execute(query).first()
        return dict(row._mapping) if row else None

    def _turn(self, item: dict[str, Any]) -> tuple[Turn, int]:
        pid = item["participant_id"]
        with self.store.reading() as conn:
            participant = conn.execute(
                select(participants).where(participants.c.participant_id == pid)
            ).first()
            if participant is None:
                raise RuntimeError(f"work item {item['work_id']} names no participant")
            trigger: Event | None = None
            timer = None
            if item["kind"] == "timer":
                found = conn.execute(select(timers).where(timers.c.timer_id == item["ref"])).first()
                timer = dict(found._mapping) if found else None
            else:
                found = conn.execute(select(events).where(events.c.event_id == item["ref"])).first()
                trigger = row_to_event(found, self.store.sealer, conn) if found else None
        row = dict(participant._mapping)
        stream = participant_stream(pid)
        turn = Turn(
            participant=row,
            item=item,
            now=self.services.clock.now(),
            trigger=trigger,
            timer=timer,
            load_history=lambda: self.store.load(stream, exclude=NOT_IN_TURN_HISTORY),
        )
        return turn, int(row["version"])


def _passive(event: Event) -> bool:
    """Whether an event appended meanwhile leaves a turn's decision standing: arrivals,
    delivery bookkeeping, and the scheduler's own chaining of timers."""
    return event.event_type in PASSIVE or event.meta.get("actor") == "scheduler"


def _lease_name(participant_id: str) -> str:
    return f"participant:{participant_id}"
