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
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from time import perf_counter
from typing import Any

from bot.conversation import memory
from bot.conversation.turns import Handler, Turn
from bot.core import metrics
from bot.services.stage2 import Due as Stage2Due
from bot.services.stage2 import Stage2
from bot.store import outage
from bot.store.event_store import ConcurrencyError
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.broadcasts import BroadcastHeld, BroadcastStepRequested
from bot.store.event_types.work import WorkCompleted, WorkFailed, WorkParked
from bot.store.events import Event, EventData, NewEvent, new_id, participant_stream
from bot.store.ports import WorkQueue
from bot.store.services import Services
from bot.store.work_queue import StoreWorkQueue, Within
from bot.timers import firing
from bot.timers.kinds import records

log = logging.getLogger(__name__)

# How many times a turn's decision goes in one flight (PostgreSQL) while passive events keep
# moving the participant's stream, before it locks and appends (Worker._commit).
FLIGHTS = 3

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
# Records the conversation memory (bot.conversation.memory) is not folded from: the LLM's prompts
# and answers (most of a long stream's bytes), tool call records, work bookkeeping. Left out when a
# row without a memory (from before migration 0015) has its stream folded for a turn.
NOT_IN_MEMORY = ("llm.called", "tool.called", "tool.failed", "work.completed")


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
        queue: WorkQueue | None = None,
        stage2: Stage2 | None = None,
    ) -> None:
        """`stage2` runs the studies' second stages (bot.services.stage2) in the turns that
        set them off; None: the deployment's studies (`studies/`), read when first needed."""
        self.services = services
        self._stage2 = stage2
        self.store = services.store
        self.queue: WorkQueue = queue if queue is not None else StoreWorkQueue(services.store)
        self.handler = handler
        self.name = name
        self.lease = lease
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._beat = _Heartbeat(self)

    def run_forever(self, stop: threading.Event, idle_wait: float = 0.5) -> None:
        """Work until `stop` is set; sleep on the work wake-up when nothing is due."""
        while not stop.is_set():
            began = outage.began()
            try:
                done = self.run_once()
                outage.succeeded(began)
            except Exception as exc:  # noqa: BLE001 - the loop's one broad except: log, go on
                outage.loop_failed(log, exc, f"worker {self.name}")
                done = 0
            if not done:
                self.services.signals.work.wait(idle_wait)

    def run_once(self, candidates: int = 20) -> int:
        """Claim one participant with due work and drain it; returns the items handled."""
        now = self.services.clock.now()
        # One pooled connection for the whole claim and drain: a checkout (and on PostgreSQL
        # its `pool_pre_ping`) per drain, not per statement group.
        with self.queue.pinned():
            for head in self.queue.heads(candidates):
                if head["available_at"] > now:
                    continue
                name = _lease_name(head["participant_id"])
                if self._acquire(name, now):
                    return self.drain(head["participant_id"], first=head, claimed_at=now)
        return 0

    def drain(
        self,
        participant_id: str,
        first: dict[str, Any] | None = None,
        claimed_at: datetime | None = None,
    ) -> int:
        """Handle a claimed participant's due items in order, renewing the lease as it goes,
        and release it. `first` is their due head item, read just before the lease was taken at
        `claimed_at` (re-checked in the turn's own read, bot.runtime.worker._turn). The commit
        of a turn reads the next head item and releases the lease when none is due."""
        handled = 0
        item = first
        name = _lease_name(participant_id)
        released = False
        with self.queue.pinned():
            try:
                with self._beat.holding(name, claimed_at):
                    while True:
                        if item is None:
                            item = self._head(participant_id)
                        if item is None or item["available_at"] > self.services.clock.now():
                            return handled
                        if handled and not self._beat.still_held(self.services.clock.now()):
                            log.warning(
                                "worker %s lost the lease of participant %s",
                                self.name,
                                participant_id,
                            )
                            return handled
                        after = self._process(item, release=name)
                        handled += 1
                        if isinstance(after, _Released):
                            released = True
                            return handled
                        item = after
            finally:
                if not released:
                    self.queue.release(name, self.name)

    def process(self, item: dict[str, Any]) -> None:
        """One turn: decide, then append the decision with `work.completed`, atomically."""
        with self._beat.holding(_lease_name(item["participant_id"]), None):
            self._process(item, release=None)

    def _acquire(self, name: str, now: datetime) -> bool:
        """Take or renew a lease on this thread's (pinned) connection: one statement, committed
        by itself."""
        return self.queue.acquire(name, self.name, now, self.lease)

    def _process(self, item: dict[str, Any], release: str | None) -> Next:
        """One turn of `item`. With `release` (the lease's name), the commit of the decision
        also reads the participant's next head item and, if none is due, gives the lease up:
        returns that head, RELEASED, or None (nothing read: the caller reads the head)."""
        stream = participant_stream(item["participant_id"])
        for attempt in (1, 2):
            read = self._turn(item)
            if read is None:
                return None  # taken over (or done) meanwhile: the item waits, still pending
            turn, version, head = read
            started = perf_counter()
            try:
                decided = self._decide(turn)
            except Exception as exc:  # noqa: BLE001 - a failing turn must not stop the queue
                log.exception("work item %s (%s) failed", item["work_id"], item["kind"])
                self._fail(item, f"{type(exc).__name__}: {exc}")
                metrics.TURN_SECONDS.labels("failed").observe(perf_counter() - started)
                return None
            within = self._within(turn, decided)
            try:
                committed = self._commit(stream, decided, version, release, item, head, within)
                metrics.TURN_SECONDS.labels("ok").observe(perf_counter() - started)
                return committed
            except ConcurrencyError as exc:
                if attempt == 2:
                    self._fail(item, "the participant's stream kept changing during the turn")
                    return None
                log.info("work item %s: %s; deciding again", item["work_id"], exc)
        return None  # pragma: no cover - the loop always returns

    def _decide(self, turn: Turn) -> list[EventData | NewEvent]:
        return turn_events(self.handler, turn)

    def _within(self, turn: Turn, decided: list[EventData | NewEvent]) -> Within | None:
        """What else the turn's commit does in its transaction: a study's stage 2 the turn
        sets off (None for all other turns, the common case, decided without a read)."""
        if not turn.participant.get("study"):
            return None
        stage2 = self.stage2
        due = stage2_due(stage2, turn.participant, turn.timer, decided)
        if due is None:
            return None
        pid, now = str(turn.participant["participant_id"]), turn.now
        return lambda tx: stage2.run(tx, pid, due, now)

    @property
    def stage2(self) -> Stage2:
        if self._stage2 is None:
            from bot.runtime.routing import study_stage2

            self._stage2 = study_stage2(self.services.settings)
        return self._stage2

    def _commit(
        self,
        stream: str,
        decided: list[EventData | NewEvent],
        version: int,
        release: str | None,
        item: dict[str, Any],
        head: dict[str, Any] | None,
        within: Within | None = None,
    ) -> Next:
        """Append the decision; where only passive events moved the stream meanwhile, append it
        again behind them. With the participant's row (`head`, PostgreSQL), each try reads the
        row anew and goes in one flight (a busy participant's messages keep moving the stream,
        and the flight is what keeps their webhooks from waiting on this process), up to
        FLIGHTS tries; the last try locks and appends."""
        tries = FLIGHTS if head is not None and within is None else 1  # then one that locks
        for tried in range(1, tries + 1):
            try:
                return self._append(stream, decided, version, release, item, head, within)
            except ConcurrencyError:
                # read before the moves are loaded, so that its version is one they reach
                head = self.queue.stored_row(stream) if head is not None and tried < tries else None
                moved = self.store.load(stream, after_version=version)
                if any(not _passive(e) for e in moved):
                    raise
                version = moved[-1].stream_version if head is None else int(head["version"])
        return self._append(stream, decided, version, release, item, None, within)

    def _append(
        self,
        stream: str,
        decided: list[EventData | NewEvent],
        version: int,
        lease: str | None,
        item: dict[str, Any],
        head: dict[str, Any] | None,
        within: Within | None = None,
    ) -> Next:
        """Append the decision at `version` (EventStore.append's ConcurrencyError if the stream
        moved); with `lease`, in the same transaction, read the next head item and release the
        lease if none is due. The heartbeat renews nothing meanwhile, and nothing after a
        release. On PostgreSQL, given the participant's row as the turn read it (`head`, at
        `version`), the append is worked out before the participant's lock and sent with the
        next-item read and the COMMIT in one flight (the store's `complete_turn`), so that the
        lock the webhook waits for is never held while this low-priority process waits for a
        core."""
        if lease is None:
            if within is None:
                self.store.append(stream, decided, expected_version=version)
                return None
            with self.store.transaction() as tx:
                tx.append(stream, decided, expected_version=version)
                within(tx)
            return None
        with self._beat.paused() as beat:
            following = self.queue.complete_turn(
                stream,
                decided,
                version,
                item,
                head if within is None else None,
                lease,
                self.name,
                self.services.clock.now,
                within,
            )
            if following is not None:
                return following
            beat.drop()
        return RELEASED

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
        return self.queue.head(participant_id)

    def _turn(self, item: dict[str, Any]) -> tuple[Turn, int, dict[str, Any] | None] | None:
        """What the turn is decided on (the work queue's `read_turn`, one snapshot's worth of
        bounded reads): the participant row (its `memory` holds what the stream says,
        bot.conversation.memory), the timer, the pending timers and the last messages (`history()`,
        bot.store.recent), which hold the trigger of a message's turn. None if the item is no
        longer the participant's head (taken over or done meanwhile)."""
        pid = item["participant_id"]
        stream = participant_stream(pid)
        read = self.queue.read_turn(
            item, self.services.windows, self.services.settings.chat_history_limit
        )
        if read is None:
            return None
        window = read.window
        row = dict(read.participant)
        stored: dict[str, Any] | None = dict(row)  # the row as stored, at the turn's version
        if memory.of(row) is None:
            stored = None  # what the turn decides on is not what is stored: lock and read it
            # A row from before migration 0015 (or of an older memory format): fold its stream
            # once for this turn; `tandem replay --repair` writes it for good.
            log.info("participant %s: no conversation memory stored; folded from the stream", pid)
            row["memory"] = memory.fold(self.store.load(stream, exclude=NOT_IN_MEMORY))
        turn = Turn(
            participant=row,
            item=item,
            now=self.services.clock.now(),
            trigger=read.trigger,
            timer=read.timer,
            load_history=lambda: window,
            pending=read.pending,
        )
        return turn, int(row["version"]), stored


class _Heartbeat:
    """Keeps renewing the lease a worker holds while it works (an LLM call can outlast one
    lease): one thread per worker, started when it first claims a participant and ending once
    it finds nothing held, instead of a thread started and joined per turn."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker
        self._lock = threading.Lock()  # guards the fields below; held while renewing
        self._name: str | None = None  # the lease held, if any
        self._renewed: datetime | None = None  # when it was last taken or renewed
        self._thread: threading.Thread | None = None

    @contextmanager
    def holding(self, name: str, renewed: datetime | None) -> Iterator[None]:
        """Renew lease `name` (taken or renewed at `renewed`, if known) until the block ends.
        Once it ends the thread renews nothing more, so a release that follows is final."""
        with self._lock:
            self._name, self._renewed = name, renewed
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"{self._worker.name}-heartbeat", daemon=True
                )
                self._thread.start()
        try:
            yield
        finally:
            with self._lock:
                self._name = self._renewed = None

    @contextmanager
    def paused(self) -> Iterator[_Heartbeat]:
        """No renewal while the block runs (a transaction that may release the lease): call
        `drop()` in it once the lease is released."""
        with self._lock:
            yield self

    def drop(self) -> None:
        """Renew nothing more (the lease was released); only inside `paused()`."""
        self._name = self._renewed = None

    def still_held(self, now: datetime) -> bool:
        """Whether the lease is still the worker's at `now`: renewed less than a third of a
        lease ago it cannot have lapsed; otherwise it is renewed here."""
        worker = self._worker
        with self._lock:
            if self._name is None:
                return False
            if self._renewed is not None and now - self._renewed < worker.lease / 3:
                return True
            if not worker._acquire(self._name, now):
                return False
            self._renewed = now
            return True

    def _run(self) -> None:
        worker = self._worker
        every = worker.lease.total_seconds() / 3
        while True:
            threading.Event().wait(every)
            with self._lock:
                if self._name is None:
                    self._thread = None  # idle: a later claim starts a new thread
                    return
                now = worker.services.clock.now()
                if worker.queue.renew(self._name, worker.name, now, worker.lease):
                    self._renewed = now
                    continue
                log.warning("worker %s could not renew the lease %s", worker.name, self._name)
                self._renewed = None  # the drain checks again before its next item


class _Released:
    """The lease was released with the turn's commit: nothing more is due."""


RELEASED = _Released()
# What a turn leaves the drain: the next head item, RELEASED, or None (the head is unknown).
Next = dict[str, Any] | _Released | None


def turn_events(handler: Handler, turn: Turn) -> list[EventData | NewEvent]:
    """The turn's events with `work.completed` of its item (only that, for an inactive
    participant's item, unless its timer's kind records them)."""
    status = turn.participant["status"]
    timer = turn.timer  # a decision point records an inactive participant as unavailable
    if status in INACTIVE and not (timer is not None and records(str(timer["kind"]), status)):
        held: list[EventData | NewEvent] = []
        request = turn.trigger.data if turn.trigger is not None else None
        if isinstance(request, BroadcastStepRequested):  # the broadcast says why, too
            reason = f"participant {status}"
            held.append(BroadcastHeld(broadcast_id=request.broadcast_id, reason=reason))
        return [*held, WorkCompleted(work_id=turn.item["work_id"], skipped=status)]
    out = list(handler(turn))
    return [*out, WorkCompleted(work_id=turn.item["work_id"])]


def stage2_due(
    stage2: Stage2,
    participant: Mapping[str, Any],
    timer: Mapping[str, Any] | None,
    decided: list[EventData | NewEvent],
) -> Stage2Due | None:
    """Whether a turn sets off its study's stage 2 (bot.services.stage2), for the worker's
    turns and the turns decided at firing alike; nothing for a participant in no study."""
    if not participant.get("study"):
        return None
    return stage2.due(participant, timer, decided)


def turns_at_firing(
    handler: Handler, kinds: Iterable[str], stage2: Stage2 | None
) -> dict[str, firing.Turn]:
    """The turns of timers of `kinds` decided in their firing batch (bot.timers.firing), as a
    worker would decide their work item's turn (`turn_events`) on the same reads; a
    participant row without a conversation memory (from before migration 0015) is left to a
    worker, which folds their stream. So is a turn that sets off a study's stage 2 (a
    decision option that starts the study's `stage2.at.step`): the worker decides it again and
    runs stage 2 in its commit (`Worker._within`), the one place stage 2 is assessed; with
    `stage2` None (no studies read), every turn of a participant in a study is left so."""

    def decide(due: firing.Due) -> list[EventData | NewEvent] | None:
        if memory.of(due.participant) is None:
            return None
        pid = due.participant["participant_id"]
        item = {
            "work_id": due.work_id,
            "participant_id": pid,
            "kind": "timer",
            "ref": due.timer["timer_id"],
            "status": "pending",
            "attempts": 0,
            "available_at": due.now,
        }
        window = due.window
        turn = Turn(
            participant=due.participant,
            item=item,
            now=due.now,
            timer=due.timer,
            load_history=lambda: window,
            pending=due.pending,
        )
        decided = turn_events(handler, turn)
        if due.participant.get("study") and (
            stage2 is None or stage2_due(stage2, due.participant, due.timer, decided)
        ):
            log.info("timer %s sets off a stage 2: left to a worker", due.timer["timer_id"])
            return None
        return decided

    return {kind: decide for kind in kinds}


def _passive(event: Event) -> bool:
    """Whether an event appended meanwhile leaves a turn's decision standing: arrivals,
    delivery bookkeeping, and the scheduler's own chaining of timers."""
    return event.event_type in PASSIVE or event.meta.get("actor") == "scheduler"


def _lease_name(participant_id: str) -> str:
    return f"participant:{participant_id}"
