"""The outbox dispatcher: sends queued messages in order per recipient, each once or visibly not.

Order. Rows form lanes: one per (stream_id, to_address), that is one per participant's phone,
plus one per other recipient (a supervisor) of the stream. Only a lane's first unsent row
(pending, deferred or unknown) can be claimed, so row n+1 waits until row n is sent, failed for
good, suppressed... A row waiting for a retry, a deferral or a reconciliation blocks the rows
behind it: a participant never receives step 3 before step 2. Lanes per recipient rather than
per stream keep a supervisor's crisis alert from waiting behind a participant's held WhatsApp
message. Twilio still does not promise arrival order; we promise sending order.

Claiming. The dispatcher works on batches of due rows (at most one per lane; BATCH of them
with a messenger that sends in this process, the console's, else one). Each of its
transactions first locks the rows' streams as appends do (on PostgreSQL the participants' rows
FOR UPDATE in key order, or advisory locks; SQLite has one writer), then claims the rows with
one conditional UPDATE whose WHERE is the same "due" condition the candidate query uses, plus
the claim it saw of each row (compare-and-set). A stale candidate therefore never wins, and any
number of dispatcher threads and processes can run. A claim lasts longer than a send can
(connect + read timeouts and a margin). On PostgreSQL a claim whose rows are all to be sent
records nothing on any stream and so locks no participant's row (`_claim_and_settle`): that lock
is what the participant's webhook waits for, and this process runs at the lowest priority.

Deciding and recording. With the rows claimed, the dispatcher reads them and their
participants afresh. Verdicts that send nothing (suppress, defer, refuse an over-long body,
give up an unknown send) are recorded in that same transaction, with the claims cleared: no
crash can leave them half done. The sends are made after the claims commit, outside any
transaction; their outcomes are appended on the rows' streams and the claims cleared together
in one transaction (on PostgreSQL worked out before the streams' locks and sent with the
COMMIT in one flight, `_record_in_one_flight`). So a batch is two write transactions, not two
per row: on SQLite each takes the one writer lock that webhooks wait for.

Crashes. Twilio has no idempotency key on create, so a send is never repeated blindly:
- crash before the claim commits: nothing happened; the row is still due;
- crash after the claim, before the outcome commits: the request may or may not have left.
  Once the claim expires the next dispatcher records it exactly like a timeout after the
  request left: `message.failed` outcome_unknown (status "unknown") and `alert.raised`
  (send_unknown), and sends nothing;
- an unknown row settles itself when a status callback for its outbox id arrives (the callback
  URL carries it; any provider report moves "unknown" forward). After
  SEND_UNKNOWN_RECONCILE_SECONDS without one, SEND_UNKNOWN_POLICY applies: give_up (default;
  marks it failed, so a participant never gets a message twice, and a late callback still
  corrects the record) or retry (sends again, risking a duplicate rather than a gap).
Errors that prove the message was not created (429, 5xx, no connection) retry with backoff and
jitter until SEND_MAX_ATTEMPTS. See docs/sending.md.
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    any_,
    bindparam,
    exists,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.exc import IntegrityError

from bot.channel import consent
from bot.channel.messenger import OPTED_OUT_CODES, Messenger, OutboundMessage, SendError
from bot.core.addresses import parse_address
from bot.core.segments import MAX_BODY, count_segments
from bot.store.direct import Direct
from bot.store.event_store import Transaction
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import (
    MessageDeferred,
    MessageFailed,
    MessageSent,
    MessageSuppressed,
)
from bot.store.events import EventData, new_id, participant_of, participant_stream
from bot.store.flight import commit_in_one_flight
from bot.store.projections.outbox import UNSENT
from bot.store.queries import pending_timers
from bot.store.schema import events, outbox, participants
from bot.store.services import Services
from bot.store.stored_rows import row_to_event

log = logging.getLogger(__name__)

WHATSAPP_WINDOW = timedelta(hours=24)
WINDOW_MARGIN = timedelta(minutes=5)  # don't start a free-form send seconds before it closes
INACTIVE = frozenset({"unenrolled", "paused", "completed", "withdrawn", "erased"})
ALWAYS_SENT = frozenset({"notice", "help"})  # kinds an inactive (not opted-out) participant gets
TEMPLATE_TEXT_LIMIT = 1000  # WhatsApp template text is at most 1024 characters in all
# Rows claimed in one transaction, when the messenger sends in this process (the console's):
# each transaction takes SQLite's one writer lock, which the webhooks wait for, and one claim
# and one outcome per row made the dispatcher the web's main contender (4,175 write
# transactions in a 200/s bench, more than the workers'); a batch too long holds the lock
# longer than a webhook should wait. A network messenger (Twilio) claims one row at a time:
# its sends take long enough that its transactions are few, and a crash with a batch claimed
# would leave every unsent row of it unknown (given up, with an alert) rather than one.
BATCH = 10
# How many times the outcomes of sends go in one flight (PostgreSQL) while the participants'
# streams keep moving, before they lock and append (`Dispatcher._record`).
FLIGHTS = 3

Row = dict[str, Any]
_EARLIER = outbox.alias("earlier")
# Statements a send runs inside its write transactions, built once (as `_due_condition`): the
# participants' rows locked in key order, and a dispatcher's claims given up.
_READ_PARTICIPANTS = select(participants).where(
    participants.c.participant_id.in_(bindparam("pids", expanding=True))
)
_LOCK_PARTICIPANTS = _READ_PARTICIPANTS.order_by(participants.c.participant_id).with_for_update()
_RELEASE = (
    update(outbox)
    .where(
        outbox.c.outbox_id.in_(bindparam("ids", expanding=True)),
        outbox.c.claimed_by == bindparam("holder"),
    )
    .values(claimed_by=None, claimed_until=None)
)
# PostgreSQL: _RELEASE with its ids as one array, for the driver's cursor (bot.store.flight).
_RELEASE_ALL = Direct(
    update(outbox)
    .where(
        outbox.c.outbox_id == any_(bindparam("ids", type_=ARRAY(outbox.c.outbox_id.type))),
        outbox.c.claimed_by == bindparam("holder"),
    )
    .values(claimed_by=None, claimed_until=None)
)


class _Records(Exception):
    """A claim without locks found a row whose verdict records an event (`_claim_and_settle`)."""


def _due_condition(*, template: bool) -> ColumnElement[bool]:
    """Rows that are the head of their lane, unclaimed (or abandoned), and due: built once per
    dispatcher, its times bound at each execution (`Dispatcher._due_params`). Building it (the
    alias's columns, the operators) is a noticeable CPU cost, and it runs three times a send
    and once inside the claim's write transaction, where on SQLite every webhook waits.
    With `template`, a held row goes out as the template, so a closed window holds none."""
    at = bindparam("due_now", type_=outbox.c.claimed_until.type)
    reconciled_by = bindparam("reconciled_by", type_=outbox.c.updated_at.type)
    last_inbound = (
        select(participants.c.last_inbound_at)
        .where(participants.c.participant_id == outbox.c.participant_id)
        .scalar_subquery()
    )
    window_from = bindparam("window_from", type_=participants.c.last_inbound_at.type)
    window_open: ColumnElement[bool] = true() if template else last_inbound > window_from
    earlier = _EARLIER  # one alias, its columns set up once
    return and_(
        outbox.c.status.in_(UNSENT),
        or_(outbox.c.claimed_until.is_(None), outbox.c.claimed_until <= at),
        or_(
            and_(outbox.c.status == "pending", outbox.c.next_attempt_at <= at),
            and_(outbox.c.status == "unknown", outbox.c.updated_at <= reconciled_by),
            and_(outbox.c.status == "deferred", window_open),
            outbox.c.claimed_by.is_not(None),  # a claim that expired with no outcome
        ),
        ~exists().where(
            earlier.c.stream_id == outbox.c.stream_id,
            earlier.c.to_address == outbox.c.to_address,
            earlier.c.position < outbox.c.position,
            earlier.c.status.in_(UNSENT),
        ),
    )


@dataclass(frozen=True)
class Claimed:
    """A row this dispatcher holds, with what it was decided on."""

    row: Row
    participant: Row | None
    to_participant: bool

    @property
    def to_their_phone(self) -> bool:
        """Addressed to the participant's own phone (a reply, or a debug trace to them)."""
        p = self.participant
        return p is not None and parse_address(self.row["to_address"]).e164 == p["phone"]


class Dispatcher:
    """Sends what is due from the outbox through a Messenger."""

    def __init__(
        self,
        services: Services,
        messenger: Messenger,
        name: str,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.services = services
        self.store = services.store
        self.settings = services.settings
        self.messenger = messenger
        self.name = name
        self.rng = rng or random.Random()
        self.claim_ttl = timedelta(seconds=2 * self.settings.twilio_timeout_seconds + 60)
        self.batch = BATCH if getattr(messenger, "sends_in_process", False) else 1
        template = self.settings.whatsapp_outside_window == "template"
        self._due = _due_condition(template=template)
        # PostgreSQL: a claim that only sends locks no stream, and outcomes go in one flight.
        self._flies = self.store.engine.dialect.name == "postgresql"

    def run_forever(self, stop: threading.Event, idle_wait: float = 1.0) -> None:
        """Send until `stop` is set; between empty polls wait for an outbox wake-up."""
        while not stop.is_set():
            try:
                handled = self.run_once()
            except Exception:  # noqa: BLE001 - the loop's one broad except: log and go on
                log.exception("dispatcher %s: loop error", self.name)
                handled = 0
            if not handled:
                self.services.signals.outbox.wait(idle_wait)

    def run_once(self, limit: int = 50) -> int:
        """Act on up to `limit` due rows (send, fail, suppress, defer); returns how many."""
        handled, seen = 0, set[str]()
        while handled < limit:
            batch = self._candidates(min(limit - handled, self.batch), seen)
            if not batch:
                break
            seen.update(candidate["outbox_id"] for candidate in batch)
            handled += self._dispatch(batch)
        return handled

    # -- finding and claiming ------------------------------------------------------------

    def _due_params(self, now: datetime) -> dict[str, datetime]:
        """The values of `_due_condition`'s parameters at `now` (`window_from` is unused, and
        ignored, where a held row goes out as the template)."""
        reconcile = timedelta(seconds=self.settings.send_unknown_reconcile_seconds)
        return {
            "due_now": now,
            "reconciled_by": now - reconcile,
            "window_from": now - WHATSAPP_WINDOW + WINDOW_MARGIN,
        }

    def _candidates(self, limit: int, seen: set[str]) -> list[Row]:
        query = select(outbox).where(self._due)
        if seen:
            query = query.where(outbox.c.outbox_id.not_in(seen))
        params = self._due_params(self.services.clock.now())
        with self.store.reading() as conn:
            rows = conn.execute(query.order_by(outbox.c.position).limit(limit), params).all()
        return [dict(r._mapping) for r in rows]

    def _read_heads(self, tx: Transaction, stream_ids: set[str]) -> dict[str, Row | None]:
        """The streams' head rows (a participant's row; None for a stream without one), read
        without a lock: for a claim that only sends, and for outcomes staged before their
        streams' locks (`_record_in_one_flight`)."""
        pids = sorted(p for p in map(participant_of, stream_ids) if p is not None)
        found = {
            participant_stream(row.participant_id): dict(row._mapping)
            for row in tx.conn.execute(_READ_PARTICIPANTS, {"pids": pids})
        }
        return {stream_id: found.get(stream_id) for stream_id in stream_ids}

    def _lock_streams(self, tx: Transaction, stream_ids: set[str]) -> dict[str, Row | None]:
        """Lock the streams as appends do, in one statement for the participants' streams (in
        key order, so that two dispatchers cannot deadlock); their head rows by stream."""
        pids = sorted(p for p in map(participant_of, stream_ids) if p is not None)
        for row in tx.conn.execute(_LOCK_PARTICIPANTS, {"pids": pids}):
            tx.adopt_head(participant_stream(row.participant_id), dict(row._mapping))
        return {stream_id: tx.lock(stream_id) for stream_id in sorted(stream_ids)}

    def _claim(
        self, tx: Transaction, candidates: list[Row], now: datetime, *, lock: bool = True
    ) -> list[Claimed]:
        """Take the rows still due and still claimed as seen, in one statement; read them
        afresh. Every writer locks the stream first and the outbox row second, so a dispatcher
        and a status callback cannot deadlock; without `lock` (a claim that records nothing on
        any stream, `_claim_and_settle`) it locks only the outbox rows, and no stream."""
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
            .values(claimed_by=self.name, claimed_until=until),
            self._due_params(now),
        )
        ids = [c["outbox_id"] for c in candidates]
        rows = tx.conn.execute(
            select(outbox)
            .where(
                outbox.c.outbox_id.in_(ids),
                outbox.c.claimed_by == self.name,
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
                r.position in queued and queued[r.position].to_participant,  # type: ignore[attr-defined]  # `queued` holds message.queued events
            )
            for r in rows
        ]

    def _release(self, tx: Transaction, outbox_ids: list[str]) -> None:
        if outbox_ids:
            tx.conn.execute(_RELEASE, {"ids": outbox_ids, "holder": self.name})

    # -- one row ------------------------------------------------------------------------

    def _dispatch(self, candidates: list[Row]) -> int:
        """Claim the candidates and record what sends nothing in one transaction, send the
        rest with none open, and record their outcomes in one more; returns how many rows were
        acted on."""
        now = self.services.clock.now()
        try:
            acted, to_send = self._claim_and_settle(candidates, now, lock=not self._flies)
        except _Records:  # rolled back, nothing claimed: claim again, the streams locked first
            acted, to_send = self._claim_and_settle(candidates, now, lock=True)
        outcomes = [(claimed, self._send(claimed, message)) for claimed, message in to_send]
        return acted + self._record(outcomes)

    def _claim_and_settle(
        self, candidates: list[Row], now: datetime, *, lock: bool
    ) -> tuple[int, list[tuple[Claimed, OutboundMessage]]]:
        """One transaction: claim the candidates, record the verdicts that send nothing and let
        those rows go; how many it recorded, and the rows to send. Without `lock` (PostgreSQL,
        `_flies`) the claim locks no participant's row, which that participant's webhook would
        wait for: the compare-and-set holds the outbox rows, and the sends follow the commit as
        ever; a verdict that records an event then raises _Records, rolling the claim back."""
        acted, settled, to_send = 0, [], []
        with self.store.transaction() as tx:
            for claimed in self._claim(tx, candidates, now, lock=lock):
                verdict = self._verdict(claimed, candidates, now)
                if isinstance(verdict, OutboundMessage):
                    to_send.append((claimed, verdict))
                    continue
                if verdict:
                    if not lock:
                        raise _Records
                    tx.append(claimed.row["stream_id"], verdict)
                    acted += 1
                settled.append(claimed.row["outbox_id"])
            self._release(tx, settled)
        return acted, to_send

    def _verdict(
        self, claimed: Claimed, candidates: list[Row], now: datetime
    ) -> list[EventData] | OutboundMessage | None:
        """An abandoned claim's outcome is unknown; any other row is decided afresh."""
        oid = claimed.row["outbox_id"]
        holder = next(c["claimed_by"] for c in candidates if c["outbox_id"] == oid)
        if holder is not None:
            return self._abandoned(claimed, holder)
        return self._decide(claimed, now)

    def _record(self, outcomes: list[tuple[Claimed, list[EventData]]]) -> int:
        """Append each send's outcome on its row's stream and clear the claims, in one
        transaction; returns how many sends were recorded."""
        if not outcomes:
            return 0
        for _ in range(FLIGHTS if self._flies else 0):
            try:
                if not self._record_in_one_flight(outcomes):
                    break
                return sum(1 for _, outcome in outcomes if outcome)
            except IntegrityError:  # a stream moved after its row was read: read it again
                log.info("dispatcher %s: a stream moved while recording", self.name)
        with self.store.transaction() as tx:
            self._lock_streams(tx, {c.row["stream_id"] for c, _ in outcomes})
            for claimed, outcome in outcomes:
                # as this transaction sees it, after the outcomes appended before this one
                participant = tx.lock(claimed.row["stream_id"])
                if outcome and participant is not None and claimed.to_their_phone:
                    outcome = outcome + self._opted_out(tx, participant, outcome[0])
                if outcome:
                    tx.append(claimed.row["stream_id"], outcome)
            self._release(tx, [c.row["outbox_id"] for c, _ in outcomes])
        return sum(1 for _, outcome in outcomes if outcome)

    def _record_in_one_flight(self, outcomes: list[tuple[Claimed, list[EventData]]]) -> bool:
        """PostgreSQL: `_record` with each outcome staged on its participant's row read
        unlocked, and the streams' locks, the appends, the claims' release and the COMMIT sent
        in one flight (bot.store.flight), so that no participant's lock waits on this process.
        False, with nothing written, where a stream has no participant row or two outcomes
        (each is recorded on the row as the one before left it): `_record` locks and writes.
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
                assert participant is not None  # checked above: every head was read
                if outcome and claimed.to_their_phone:
                    outcome = outcome + self._opted_out(tx, participant, outcome[0])
                if outcome:
                    staged.append(
                        tx.stage(stream, outcome, int(participant["version"]), participant)
                    )
            ids = [claimed.row["outbox_id"] for claimed, _ in outcomes]
            commit_in_one_flight(tx, staged, [(_RELEASE_ALL, {"ids": ids, "holder": self.name})])
        return True

    def _decide(self, claimed: Claimed, now: datetime) -> list[EventData] | OutboundMessage | None:
        """What to do with a claimed row: events to record, a message to send, or nothing."""
        row, oid = claimed.row, claimed.row["outbox_id"]
        if row["status"] == "unknown" and (
            self.settings.send_unknown_policy == "give_up"
            or row["attempts"] >= self.settings.send_max_attempts
        ):
            waited = int(self.settings.send_unknown_reconcile_seconds)
            return [
                MessageFailed(
                    outbox_id=oid,
                    error_message=f"no status callback within {waited} s of a send whose outcome "
                    "is unknown; given up rather than risk sending it twice",
                    permanent=True,
                    outcome_unknown=True,
                    attempt=row["attempts"],
                )
            ]
        reason = _suppression(claimed)
        if reason:
            return [MessageSuppressed(outbox_id=oid, reason=reason)]
        body = row["body"] or ""
        if len(body.encode("utf-16-le")) // 2 > MAX_BODY:  # UTF-16 units, as split_body counts
            return [
                MessageFailed(
                    outbox_id=oid,
                    error_message=f"body is {len(body)} characters; the limit is {MAX_BODY} "
                    "(bot.channel.outbound splits longer texts when queueing)",
                    attempt=row["attempts"],
                )
            ]
        message = OutboundMessage(
            outbox_id=oid,
            to_address=row["to_address"],
            channel=row["channel"],
            body=row["body"],
            content_sid=row["content_sid"],
            content_variables=row["content_variables"],
        )
        if not self._window_closed(claimed, now):
            return message
        if self.settings.whatsapp_outside_window == "template":
            return _as_template(message, self.settings.whatsapp_template_sid or "")
        if row["status"] == "deferred":
            return None
        return [
            MessageDeferred(
                outbox_id=oid,
                reason="WhatsApp 24-hour window closed; held until the participant writes again",
            )
        ]

    def _window_closed(self, claimed: Claimed, now: datetime) -> bool:
        """A free-form WhatsApp message to a participant more than 24 h after they last wrote."""
        row, p = claimed.row, claimed.participant
        if row["channel"] != "whatsapp" or row["content_sid"] or not claimed.to_their_phone:
            return False
        last = p["last_inbound_at"] if p else None
        return last is None or now >= last + WHATSAPP_WINDOW - WINDOW_MARGIN

    def _abandoned(self, claimed: Claimed, holder: str) -> list[EventData]:
        """A claim that expired with no outcome: the send may have happened."""
        return self._unknown(
            claimed.row,
            SendError("unknown", f"dispatcher {holder} stopped before recording the outcome"),
            claimed.row["attempts"] + 1,
        )

    # -- sending and its outcome ----------------------------------------------------------

    def _send(self, claimed: Claimed, message: OutboundMessage) -> list[EventData]:
        row, attempt = claimed.row, claimed.row["attempts"] + 1
        try:
            result = self.messenger.send(message)
        except SendError as exc:
            return self._failed(row, exc, attempt)
        except Exception as exc:  # noqa: BLE001 - an adapter bug: the send may have happened
            log.exception("outbox %s: messenger raised %s", row["outbox_id"], type(exc).__name__)
            return self._failed(row, SendError("unknown", f"{type(exc).__name__}: {exc}"), attempt)
        segments = (
            count_segments(message.body)
            if row["channel"] == "sms" and message.body and not message.content_sid
            else None
        )
        # A messenger that shows each send itself (the console) gets no second line per send.
        level = logging.DEBUG if getattr(self.messenger, "shows_sends", False) else logging.INFO
        log.log(
            level,
            "outbox %s sent as %s (attempt %d)",
            row["outbox_id"],
            result.provider_sid,
            attempt,
        )
        return [
            MessageSent(
                outbox_id=row["outbox_id"],
                provider_sid=result.provider_sid,
                segments=segments,
                attempt=attempt,
            )
        ]

    def _failed(self, row: Row, exc: SendError, attempt: int) -> list[EventData]:
        oid = row["outbox_id"]
        log.warning("outbox %s: send failed (%s, code %s)", oid, exc.failure, exc.code)
        if exc.failure == "unknown":
            return self._unknown(row, exc, attempt)
        if exc.failure == "retry" and attempt < self.settings.send_max_attempts:
            retry_at = self.services.clock.now() + self._backoff(attempt)
            return [
                MessageFailed(
                    outbox_id=oid,
                    error_code=exc.code,
                    error_message=exc.message,
                    permanent=False,
                    attempt=attempt,
                    retry_at=retry_at,
                )
            ]
        message = exc.message
        if exc.failure == "retry":
            message = f"gave up after {attempt} attempts; the last: {message}"
        return [
            MessageFailed(
                outbox_id=oid, error_code=exc.code, error_message=message, attempt=attempt
            )
        ]

    def _unknown(self, row: Row, exc: SendError, attempt: int) -> list[EventData]:
        s = self.settings
        return [
            MessageFailed(
                outbox_id=row["outbox_id"],
                error_code=exc.code,
                error_message=exc.message,
                permanent=False,
                outcome_unknown=True,
                attempt=attempt,
            ),
            AlertRaised(
                alert_id=new_id(),
                kind="send_unknown",
                summary=f"outbox {row['outbox_id']}: {exc.message}. Waiting "
                f"{int(s.send_unknown_reconcile_seconds)} s for a status callback, then "
                f"SEND_UNKNOWN_POLICY={s.send_unknown_policy}.",
            ),
        ]

    def _opted_out(self, tx: Transaction, participant: Row, failed: EventData) -> list[EventData]:
        """A 21610 from the participant's own phone: they opted out (recorded once)."""
        if not (isinstance(failed, MessageFailed) and failed.error_code in OPTED_OUT_CODES):
            return []
        pid = participant["participant_id"]
        now = self.services.clock.now()
        return consent.opt_out(participant, pending_timers(tx.conn, pid), "error_21610", now)

    def _backoff(self, attempt: int) -> timedelta:
        """Exponential, capped, with "equal jitter": between half and all of the step."""
        s = self.settings
        step = min(s.send_retry_base_seconds * 2 ** (attempt - 1), s.send_retry_max_seconds)
        return timedelta(seconds=step / 2 + self.rng.uniform(0, step / 2))


def _suppression(claimed: Claimed) -> str | None:
    """Why a row must not be sent to its participant, if it must not."""
    p, row = claimed.participant, claimed.row
    if p is None:
        return None
    # HELP is answered even after STOP: carriers expect it whatever the consent.
    if p["opted_out"] and (claimed.to_participant or claimed.to_their_phone):
        return None if row["kind"] == "help" else "opted out"
    if claimed.to_participant and p["status"] in INACTIVE and row["kind"] not in ALWAYS_SENT:
        return f"participant {p['status']}"
    return None


def _as_template(message: OutboundMessage, content_sid: str) -> OutboundMessage:
    """The approved template that may open a conversation, carrying the text as {{1}}.

    WhatsApp refuses template variables with new lines, tabs or runs of spaces, so whitespace
    is collapsed; the full text stays in the transcript.
    """
    text = " ".join((message.body or "").split())
    if len(text) > TEMPLATE_TEXT_LIMIT:
        text = text[: TEMPLATE_TEXT_LIMIT - 1] + "…"
    return OutboundMessage(
        outbox_id=message.outbox_id,
        to_address=message.to_address,
        channel=message.channel,
        content_sid=content_sid,
        content_variables={"1": text},
    )
