"""The outbox behind its port: due rows found, claimed with compare-and-set, outcomes recorded.

The dispatcher (bot.channel.dispatcher) decides what a row gets and sends it; this holds how
rows are found, claimed and settled, with the same statements and round trips the dispatcher
ran itself before, private to the store. On PostgreSQL a claim whose rows are all to be sent
locks no participant's row, and outcomes go with the COMMIT in one flight (bot.store.flight):
those locks are what the participants' webhooks wait for.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import and_, or_, select, update
from sqlalchemy.exc import IntegrityError

from bot.core.addresses import parse_address
from bot.store.event_store import EventStore, Transaction
from bot.store.events import EventData, participant_of, participant_stream
from bot.store.flight import commit_in_one_flight
from bot.store.outbox_statements import (
    LOCK_PARTICIPANTS,
    READ_PARTICIPANTS,
    RELEASE,
    RELEASE_ALL,
    due_condition,
)
from bot.store.queries import pending_timers
from bot.store.schema import events, outbox
from bot.store.stored_rows import row_to_event

log = logging.getLogger(__name__)

Row = dict[str, Any]
# How many times the outcomes of sends go in one flight (PostgreSQL) while the participants'
# streams keep moving, before they lock and append (`StoreOutbox.record`).
FLIGHTS = 3


@dataclass(frozen=True)
class Claimed:
    """A row a dispatcher holds, with what it was decided on."""

    row: Row
    participant: Row | None
    to_participant: bool

    @property
    def to_their_phone(self) -> bool:
        """Addressed to the participant's own phone (a reply, or a debug trace to them)."""
        p = self.participant
        return p is not None and parse_address(self.row["to_address"]).e164 == p["phone"]


Send = TypeVar("Send")
# What a row's verdict is: events to record, something to send (the dispatcher's message),
# or None (nothing: the claim is let go).
Verdict = Callable[[Claimed], list[EventData] | Send | None]
# More events to record with a send's outcome, given the participant's row, the outcome's
# first event and a reader of the participant's pending timers (the dispatcher's opt-out).
FollowUp = Callable[[Row, EventData, Callable[[str], list[Row]]], list[EventData]]


class _Records(Exception):
    """A claim without locks found a row whose verdict records an event."""


class StoreOutbox:
    """`bot.store.ports.Outbox` on an EventStore, for one dispatcher (`holder`)."""

    def __init__(
        self,
        store: EventStore,
        holder: str,
        *,
        claim_ttl: timedelta,
        template: bool,
        reconcile: timedelta,
        window: timedelta,
    ) -> None:
        self.store = store
        self.holder = holder
        self.claim_ttl = claim_ttl
        self.reconcile = reconcile
        self.window = window
        self._due = due_condition(template=template)
        # PostgreSQL: a claim that only sends locks no stream, and outcomes go in one flight.
        self._flies = store.engine.dialect.name == "postgresql"

    def due_params(self, now: datetime) -> dict[str, datetime]:
        """The values of the due condition's parameters at `now` (`window_from` is unused,
        and ignored, where a held row goes out as the template)."""
        return {
            "due_now": now,
            "reconciled_by": now - self.reconcile,
            "window_from": now - self.window,
        }

    def candidates(self, limit: int, seen: set[str], now: datetime) -> list[Row]:
        """Up to `limit` due rows (the heads of their lanes), none of `seen`, by position."""
        query = select(outbox).where(self._due)
        if seen:
            query = query.where(outbox.c.outbox_id.not_in(seen))
        with self.store.reading() as conn:
            rows = conn.execute(
                query.order_by(outbox.c.position).limit(limit), self.due_params(now)
            ).all()
        return [dict(r._mapping) for r in rows]

    def claim_and_settle(
        self, candidates: list[Row], now: datetime, verdict: Verdict[Send]
    ) -> tuple[int, list[tuple[Claimed, Send]]]:
        """One transaction: claim the candidates, record the verdicts that send nothing and
        let those rows go; how many it recorded, and the rows to send with what to send. On
        PostgreSQL the claim first locks no participant's row (the compare-and-set holds the
        outbox rows); a verdict that records an event rolls it back, and the claim is made
        again with the streams locked first."""
        try:
            return self._claim_and_settle(candidates, now, verdict, lock=not self._flies)
        except _Records:  # rolled back, nothing claimed: claim again, the streams locked first
            return self._claim_and_settle(candidates, now, verdict, lock=True)

    def record(self, outcomes: list[tuple[Claimed, list[EventData]]], follow_up: FollowUp) -> int:
        """Append each send's outcome (with `follow_up`'s events, for a row to the
        participant's own phone) on its row's stream and clear the claims, in one
        transaction; returns how many sends were recorded."""
        if not outcomes:
            return 0
        for _ in range(FLIGHTS if self._flies else 0):
            try:
                if not self._record_in_one_flight(outcomes, follow_up):
                    break
                return sum(1 for _, outcome in outcomes if outcome)
            except IntegrityError:  # a stream moved after its row was read: read it again
                log.info("dispatcher %s: a stream moved while recording", self.holder)
        with self.store.transaction() as tx:
            self._lock_streams(tx, {c.row["stream_id"] for c, _ in outcomes})
            for claimed, outcome in outcomes:
                # as this transaction sees it, after the outcomes appended before this one
                participant = tx.lock(claimed.row["stream_id"])
                if outcome and participant is not None and claimed.to_their_phone:
                    outcome = outcome + follow_up(participant, outcome[0], _pending(tx))
                if outcome:
                    tx.append(claimed.row["stream_id"], outcome)
            self._release(tx, [c.row["outbox_id"] for c, _ in outcomes])
        return sum(1 for _, outcome in outcomes if outcome)

    def _claim_and_settle(
        self, candidates: list[Row], now: datetime, verdict: Verdict[Send], *, lock: bool
    ) -> tuple[int, list[tuple[Claimed, Send]]]:
        acted, settled, to_send = 0, [], []
        with self.store.transaction() as tx:
            for claimed in self._claim(tx, candidates, now, lock=lock):
                decided = verdict(claimed)
                if decided is not None and not isinstance(decided, list):
                    to_send.append((claimed, decided))
                    continue
                if decided:
                    if not lock:
                        raise _Records
                    tx.append(claimed.row["stream_id"], decided)
                    acted += 1
                settled.append(claimed.row["outbox_id"])
            self._release(tx, settled)
        return acted, to_send

    def _read_heads(self, tx: Transaction, stream_ids: set[str]) -> dict[str, Row | None]:
        """The streams' head rows (a participant's row; None for a stream without one), read
        without a lock: for a claim that only sends, and for outcomes staged before their
        streams' locks (`_record_in_one_flight`)."""
        pids = sorted(p for p in map(participant_of, stream_ids) if p is not None)
        found = {
            participant_stream(row.participant_id): dict(row._mapping)
            for row in tx.conn.execute(READ_PARTICIPANTS, {"pids": pids})
        }
        return {stream_id: found.get(stream_id) for stream_id in stream_ids}

    def _lock_streams(self, tx: Transaction, stream_ids: set[str]) -> dict[str, Row | None]:
        """Lock the streams as appends do, in one statement for the participants' streams (in
        key order, so that two dispatchers cannot deadlock); their head rows by stream."""
        pids = sorted(p for p in map(participant_of, stream_ids) if p is not None)
        for row in tx.conn.execute(LOCK_PARTICIPANTS, {"pids": pids}):
            tx.adopt_head(participant_stream(row.participant_id), dict(row._mapping))
        return {stream_id: tx.lock(stream_id) for stream_id in sorted(stream_ids)}

    def _claim(
        self, tx: Transaction, candidates: list[Row], now: datetime, *, lock: bool = True
    ) -> list[Claimed]:
        """Take the rows still due and still claimed as seen, in one statement; read them
        afresh. Every writer locks the stream first and the outbox row second, so a dispatcher
        and a status callback cannot deadlock; without `lock` (a claim that records nothing on
        any stream) it locks only the outbox rows, and no stream."""
        streams = {c["stream_id"] for c in candidates}
        heads = self._lock_streams(tx, streams) if lock else self._read_heads(tx, streams)
        until = now + self.claim_ttl
        tx.conn.execute(
            update(outbox)
            .where(
                or_(
                    *(
                        and_(
                            outbox.c.outbox_id == c["outbox_id"],
                            outbox.c.claimed_by.is_not_distinct_from(c["claimed_by"]),
                        )
                        for c in candidates
                    )
                ),
                self._due,
            )
            .values(claimed_by=self.holder, claimed_until=until),
            self.due_params(now),
        )
        ids = [c["outbox_id"] for c in candidates]
        rows = tx.conn.execute(
            select(outbox)
            .where(
                outbox.c.outbox_id.in_(ids),
                outbox.c.claimed_by == self.holder,
                outbox.c.claimed_until == until,
            )
            .order_by(outbox.c.position)
        ).all()
        positions = [r.position for r in rows if heads[r.stream_id] is not None]
        queued = {
            e.seq: row_to_event(e, tx.store.sealer, tx.conn).data
            for e in tx.conn.execute(select(events).where(events.c.seq.in_(positions)))
        }
        return [
            Claimed(
                dict(r._mapping),
                heads[r.stream_id],
                r.position in queued and queued[r.position].to_participant,  # type: ignore[attr-defined]
            )
            for r in rows
        ]

    def _release(self, tx: Transaction, outbox_ids: list[str]) -> None:
        if outbox_ids:
            tx.conn.execute(RELEASE, {"ids": outbox_ids, "holder": self.holder})

    def _record_in_one_flight(
        self, outcomes: list[tuple[Claimed, list[EventData]]], follow_up: FollowUp
    ) -> bool:
        """PostgreSQL: `record` with each outcome staged on its participant's row read
        unlocked, and the streams' locks, the appends, the claims' release and the COMMIT sent
        in one flight (bot.store.flight), so that no participant's lock waits on this process.
        False, with nothing written, where a stream has no participant row or two outcomes
        (each is recorded on the row as the one before left it): `record` locks and writes.
        A stream that moved since its row was read raises IntegrityError, nothing kept."""
        streams = [claimed.row["stream_id"] for claimed, _ in outcomes]
        if len(set(streams)) < len(streams):
            return False
        with self.store.transaction() as tx:
            heads = self._read_heads(tx, set(streams))
            if any(head is None for head in heads.values()):
                return False
            staged = []
            for claimed, outcome in sorted(outcomes, key=lambda o: o[0].row["stream_id"]):
                stream, participant = claimed.row["stream_id"], heads[claimed.row["stream_id"]]
                assert participant is not None  # checked above
                if outcome and claimed.to_their_phone:
                    outcome = outcome + follow_up(participant, outcome[0], _pending(tx))
                if outcome:
                    staged.append(
                        tx.stage(stream, outcome, int(participant["version"]), participant)
                    )
            ids = [claimed.row["outbox_id"] for claimed, _ in outcomes]
            commit_in_one_flight(tx, staged, [(RELEASE_ALL, {"ids": ids, "holder": self.holder})])
        return True


def _pending(tx: Transaction) -> Callable[[str], list[Row]]:
    """A reader of a participant's pending timers in `tx`."""
    return lambda participant_id: pending_timers(tx.conn, participant_id)
