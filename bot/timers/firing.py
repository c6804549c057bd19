"""Firing a due timer: the decision (pure) and the short transaction that records it.

For each due timer (many in one transaction when a burst is due: `fire_many`, which locks the
batch's participants and reads its timers in one statement each, then records every decision
with one `append_batch`: one INSERT and one flush for the batch), under the participant's
stream lock: read the timer; if it is still `scheduled` and due, decide, in this order —
1. participant inactive (paused, opted out, completed, withdrawn, unenrolled) -> `timer.skipped`;
2. later than its kind's grace (the process was down) -> `timer.skipped` reason "missed";
3. inside quiet hours -> `timer.deferred` to their end, or `timer.skipped`, per the kind;
4. otherwise `timer.fired` (with how late it was), which creates the worker's work item.
An occurrence of a daily schedule, or of a recurring one (bot.timers.series), that is fired or
skipped (except for a final status) also schedules the next occurrence in the same append, so a
schedule never depends on the worker; an occasion of a recurring schedule due in quiet hours is
deferred to their end unless its schedule says `quiet_hours: skip`.
The status check under the stream lock and the idempotency key `timer:<id>:fired` make a
second firing of the same timer, by any process, write nothing.

A kind the runtime hands in as decided at firing (`Turns`: decision points) has its turn
decided in the batch too, rather than by a worker after it: `timer.fired`, the turn's events
and `work.completed` of the item `timer.fired` creates go in the batch's one append, so a
burst of points costs a few statements a batch, not a claim, reads and a commit a point. Its
turn is decided on what the worker's would read (the participant's locked row, takeover,
pending timers and last messages: `turn_reads`, one statement each for the batch), and only
where the worker would decide it next: a participant with work pending (a turn waits or is
being decided) gets the plain `timer.fired`, as does the second of their timers in one batch
(it is decided after the first, by the worker). One transaction: a crash or failure mid-batch
records none of it, so no point is lost (the timers stay scheduled) or decided twice (a
second firing finds them fired, and the key). A turn that fails (or a store without the
reads) leaves that timer to the worker, which retries and parks it as it does any turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from bot.core.localtime import QuietHours
from bot.store.event_store import (
    ConcurrencyError,
    ConstraintViolation,
    DuplicateInBatch,
    EventStore,
    Transaction,
)
from bot.store.event_types.timers import TimerDeferred, TimerFired, TimerSkipped
from bot.store.events import SYSTEM_STREAM, Event, EventData, NewEvent, participant_stream
from bot.store.recent import RecentWindows
from bot.store.timer_firing import (
    StorageError,
    adopt_new_rows,
    adopt_timer,
    busy,
    due_timer_ids,
    timer_row,
    timers_locked,
    turn_reads,
)
from bot.timers import quiet_hours as quiet
from bot.timers import series
from bot.timers.kinds import KINDS, RECORDING, KindPolicy, policy_for
from bot.timers.one_shot import zone_of
from bot.timers.schedules import next_occurrence

log = logging.getLogger(__name__)

FINAL_STATUSES = {"completed", "withdrawn", "unenrolled", "erased"}
# Timers fired in one transaction: a burst commits once per batch, while on SQLite the writer
# lock is held for one batch at a time, so webhooks wait at most that long.
BATCH = 100
ACTOR = {"actor": "scheduler"}


@dataclass(frozen=True)
class Due:
    """A timer fired in its batch whose turn is decided there too: what the worker's turn of
    its work item would be decided on."""

    participant: Mapping[str, Any]  # their row, locked, with `takeover` (their takeovers row)
    timer: Mapping[str, Any]  # the timers row, as fired
    work_id: str  # the work item `timer.fired` creates (its event id), done in the same append
    window: list[Event]  # their last messages (bot.store.recent)
    pending: list[dict[str, Any]]  # their pending timers rows
    now: datetime


# A turn decided at firing: its events (with `work.completed`), or None to leave it to a worker.
Turn = Callable[[Due], Sequence[EventData | NewEvent] | None]


@dataclass(frozen=True)
class Turns:
    """The kinds whose turns are decided in their firing batch (handed in by the runtime),
    and where their last messages are read (the process's windows, bot.store.recent)."""

    kinds: Mapping[str, Turn]
    windows: RecentWindows
    history_limit: int


@dataclass(frozen=True)
class FiringPolicy:
    """What the firing path needs to know besides the rows: quiet hours and kind policies, and
    the turns decided at firing (none: every fired timer waits for a worker)."""

    quiet_hours: QuietHours | None = None
    by_intervention: Mapping[str, QuietHours | None] = field(default_factory=dict)
    kinds: Mapping[str, KindPolicy] = field(default_factory=lambda: dict(KINDS))
    turns: Turns | None = None


@dataclass(frozen=True)
class Decision:
    """What happens to one timer now; `events` are appended with `idempotency_key`."""

    outcome: Literal["fired", "skipped", "deferred", "none"]
    events: list[EventData]
    idempotency_key: str | None = None
    reason: str | None = None


NOTHING = Decision("none", [])


def decide(
    timer: Mapping[str, Any] | None,
    participant: Mapping[str, Any] | None,
    now: datetime,
    policy: FiringPolicy,
) -> Decision:
    """The decision for a timers row at `now` (pure)."""
    if timer is None or timer["status"] != "scheduled" or timer["due_at"] > now:
        return NOTHING
    timer_id = timer["timer_id"]
    key = f"timer:{timer_id}:fired"
    late = max(0.0, (now - timer["due_at"]).total_seconds())
    if participant is None:
        return _skip(timer_id, "no participant", key, late)
    status = participant.get("status")
    recording = policy_for(timer["kind"], policy.kinds).records_inactive and status in RECORDING
    if (status != "active" or participant.get("opted_out")) and not recording:
        reason = str(status) if status != "active" else "opted_out"
        chain = [] if status in FINAL_STATUSES else _chain(timer, participant, now, policy)
        return _skip(timer_id, reason, key, late, chain)
    kind = policy_for(timer["kind"], policy.kinds)
    if kind.grace is not None and late > kind.grace.total_seconds():
        return _skip(timer_id, "missed", key, late, _chain(timer, participant, now, policy))
    window = quiet.for_participant(participant, policy.quiet_hours, policy.by_intervention)
    tz = zone_of(participant)
    if kind.quiet_hours != "ignore" and window is not None and window.contains(now, tz):
        if _quiet_policy(timer, kind.quiet_hours) == "skip":
            return _skip(
                timer_id, "quiet_hours", key, late, _chain(timer, participant, now, policy)
            )
        until = window.end_after(now, tz)
        deferred = TimerDeferred(timer_id=timer_id, due_at=until, reason="quiet_hours")
        return Decision(
            "deferred", [deferred], f"timer:{timer_id}:deferred:{until.isoformat()}", "quiet_hours"
        )
    fired = TimerFired(timer_id=timer_id, late_seconds=late)
    return Decision("fired", [fired, *_chain(timer, participant, now, policy)], key)


def _skip(
    timer_id: str, reason: str, key: str, late: float, chain: list[EventData] | None = None
) -> Decision:
    skipped = TimerSkipped(timer_id=timer_id, reason=reason, late_seconds=late)
    return Decision("skipped", [skipped, *(chain or [])], key, reason)


def _quiet_policy(timer: Mapping[str, Any], policy: str) -> str:
    """What quiet hours do to this timer: its kind's policy, but an occasion of a recurring
    schedule follows its schedule (defer unless it says `quiet_hours: skip`)."""
    found = (timer.get("payload") or {}).get("series")
    if isinstance(found, Mapping):
        return str((found.get("repeat") or {}).get("quiet_hours") or "defer")
    return policy


def _chain(
    timer: Mapping[str, Any], participant: Mapping[str, Any], now: datetime, policy: FiringPolicy
) -> list[EventData]:
    """The next occurrence of a daily schedule, or of a recurring one (bot.timers.series,
    with the skipped occasions before it recorded), scheduled as this one is decided."""
    window = quiet.for_participant(participant, policy.quiet_hours, policy.by_intervention)
    following = series.following(timer, participant, window)
    if following:
        return following
    nxt = next_occurrence(timer, participant, now)
    return [nxt] if nxt is not None else []


def fire_one(store: EventStore, timer_id: str, now: datetime, policy: FiringPolicy) -> Decision:
    """Decide on one timer and record the decision, in one short transaction."""
    with store.transaction() as tx:
        decision = _fire_in(tx, timer_id, now, policy)
    _log(timer_id, decision)
    return decision


def fire_many(
    store: EventStore, timer_ids: Sequence[str], now: datetime, policy: FiringPolicy
) -> list[Decision]:
    """Decide on many timers and record every decision in one transaction (one commit for a
    burst), each exactly as `fire_one` would; if the batch fails (a stream moved, a
    constraint, a deadlock, a timer whose firing its stream holds already), each timer is fired
    again in its own transaction, so one bad timer delays none of the others. The decisions, in
    the order of `timer_ids`."""
    if len(timer_ids) < (1 if policy.turns is not None else 2):
        return [fire_one(store, t, now, policy) for t in timer_ids]
    decided: dict[str, Decision] = {}
    left: Sequence[str] = timer_ids
    while left:  # again for the timers a batch leaves (a participant's second turn at firing)
        try:
            with store.transaction() as tx:
                done, left = _fire_batch(tx, left, now, policy)
        except (ConcurrencyError, ConstraintViolation, DuplicateInBatch, StorageError) as exc:
            log.info("firing %d timers together failed (%s); one by one", len(left), exc)
            done, left = {t: fire_one(store, t, now, policy) for t in left}, []
        decided |= done
    decisions = [decided.pop(timer_id, NOTHING) for timer_id in timer_ids]  # a repeat: nothing
    for timer_id, decision in zip(timer_ids, decisions, strict=True):
        _log(timer_id, decision)
    return decisions


def _fire_batch(
    tx: Transaction, timer_ids: Sequence[str], now: datetime, policy: FiringPolicy
) -> tuple[dict[str, Decision], list[str]]:
    """`_fire_in` for many timers with a constant number of statements: lock every participant
    the timers belong to (one statement, in participant order, so two schedulers never
    deadlock), read the timers under those locks (one statement), hand both rows to the
    append, which then reads neither again, and record every decision in one `append_batch`
    (which raises `DuplicateInBatch` if a timer's key is recorded already). Also the timers
    left for another batch, untouched: those of a participant whose earlier timer's turn is
    decided in this one (`_turns`), so that theirs is decided on what that one did."""
    ids = list(dict.fromkeys(timer_ids))
    rows = timers_locked(tx, ids)
    if rows is None:  # a store without head or timers rows: the plain path
        return {t: _fire_in(tx, t, now, policy) for t in ids}, []
    decided: dict[str, Decision] = {}
    recording: list[tuple[str, Decision, dict[str, Any]]] = []
    for row in rows:
        pid = row["participant_id"]
        if pid is None:  # a system timer: its stream has no head row to have locked
            decided[row["timer_id"]] = _fire_in(tx, row["timer_id"], now, policy)
            continue
        person = tx.lock(participant_stream(pid))  # adopted above: no statement
        decision = decide(row, person, now, policy)
        if decision.events:
            adopt_timer(tx, row)
            recording.append((pid, decision, row))
        decided[row["timer_id"]] = decision
    made, later = _turns(tx, recording, now, policy)
    if later:
        recording = [r for r in recording if r[2]["timer_id"] not in later]
        decided = {t: d for t, d in decided.items() if t not in later}
    if recording:  # every decision's events in one INSERT, their projection writes in one flush
        tx.append_batch(
            [
                (
                    participant_stream(pid),
                    made.get(row["timer_id"]) or [NewEvent(e, meta=ACTOR) for e in d.events],
                    d.idempotency_key,
                )
                for pid, d, row in recording
            ]
        )
    return decided, [t for t in ids if t in later]


def _turns(
    tx: Transaction,
    recording: Sequence[tuple[str, Decision, dict[str, Any]]],
    now: datetime,
    policy: FiringPolicy,
) -> tuple[dict[str, list[NewEvent]], set[str]]:
    """The events of each fired timer whose turn is decided here (see the module), by timer
    id: its decision's (`timer.fired` first, whose id is the work item's) and its turn's; and
    the timers to leave for another batch: whatever comes after such a timer for its
    participant (by due time), which is then decided on what this turn did."""
    turns = policy.turns
    if turns is None:
        return {}, set()
    first: dict[str, tuple[Decision, dict[str, Any]]] = {}
    for pid, decision, row in recording:  # by due time: what a participant's worker takes first
        if decision.outcome == "fired":
            first.setdefault(pid, (decision, row))
    first = {pid: found for pid, found in first.items() if found[1]["kind"] in turns.kinds}
    waiting = busy(tx, list(first))
    ready = {pid: found for pid, found in first.items() if pid not in waiting}
    if not ready:
        return {}, set()
    fired = {row["timer_id"] for _, d, row in recording if d.outcome in ("fired", "skipped")}
    persons = {pid: tx.lock(participant_stream(pid)) or {} for pid in ready}
    versions = {pid: int(person.get("version") or 0) for pid, person in persons.items()}
    reads = turn_reads(tx, versions, turns.windows, turns.history_limit)
    found: dict[str, list[NewEvent]] = {}
    for pid, (decision, row) in ready.items():
        events = [NewEvent(e, meta=ACTOR) for e in decision.events]
        due = Due(
            participant={**persons[pid], "takeover": reads[pid].takeover},
            timer={**row, "status": "fired", "fired_at": now, "updated_at": now},
            work_id=events[0].event_id,  # timer.fired: the work item it creates
            window=reads[pid].window,
            pending=[t for t in reads[pid].pending if t["timer_id"] not in fired],
            now=now,
        )
        try:
            turn = turns.kinds[str(row["kind"])](due)
        except Exception:  # noqa: BLE001 - a failing turn is the worker's to retry and park
            log.exception("timer %s: its turn failed at firing; left to a worker", row["timer_id"])
            continue
        if turn is not None:
            made = [e if isinstance(e, NewEvent) else NewEvent(e) for e in turn]
            adopt_new_rows(tx, due.work_id, made)
            found[row["timer_id"]] = [*events, *made]
    later: set[str] = set()
    after: set[str] = set()  # participants past their timer decided here, in recording order
    for pid, _, row in recording:
        if pid in after:
            later.add(row["timer_id"])
        elif row["timer_id"] in found:
            after.add(pid)
    return found, later


def _fire_in(tx: Transaction, timer_id: str, now: datetime, policy: FiringPolicy) -> Decision:
    first = timer_row(tx, timer_id)
    if first is None or first["status"] != "scheduled" or first["due_at"] > now:
        return NOTHING
    pid = first["participant_id"]
    stream = participant_stream(pid) if pid else SYSTEM_STREAM
    person = tx.lock(stream)
    row = timer_row(tx, timer_id)  # again, now that no one else can change it
    decision = decide(row, person, now, policy)
    if decision.events:
        decision = _record(tx, stream, decision)
    return decision


def _record(tx: Transaction, stream: str, decision: Decision) -> Decision:
    """Append the decision's events under its idempotency key (nothing if it was recorded)."""
    result = tx.append(
        stream,
        [NewEvent(e, meta=ACTOR) for e in decision.events],
        idempotency_key=decision.idempotency_key,
    )
    return NOTHING if result.duplicate else decision


def _log(timer_id: str, decision: Decision) -> None:
    if decision.outcome != "none":
        log.info("timer %s %s (%s)", timer_id, decision.outcome, decision.reason or "due")


def fire_due(
    store: EventStore, now: datetime, policy: FiringPolicy, limit: int | None = None
) -> list[Decision]:
    """Fire (or skip, or defer) every timer due at `now`; the decisions that did something."""
    due = due_timer_ids(store, now, limit)
    decisions = [
        d
        for start in range(0, len(due), BATCH)
        for d in fire_many(store, due[start : start + BATCH], now, policy)
    ]
    return [d for d in decisions if d.outcome != "none"]
