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
records nothing on any stream and so locks no participant's row (the store's outbox,
`bot.store.outbox_claims`): that lock is what the participant's webhook waits for, and this
process runs at the lowest priority.

Deciding and recording. With the rows claimed, the dispatcher reads them and their
participants afresh. Verdicts that send nothing (suppress, defer, refuse an over-long body,
give up an unknown send) are recorded in that same transaction, with the claims cleared: no
crash can leave them half done. The sends are made after the claims commit, outside any
transaction; their outcomes are appended on the rows' streams and the claims cleared together
in one transaction (on PostgreSQL worked out before the streams' locks and sent with the
COMMIT in one flight, the store's `record`). So a batch is two write transactions, not two
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
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from bot.channel import consent
from bot.channel.messenger import OPTED_OUT_CODES, Messenger, OutboundMessage, SendError
from bot.core.segments import MAX_BODY, count_segments
from bot.store import outage
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.messages import (
    MessageDeferred,
    MessageFailed,
    MessageSent,
    MessageSuppressed,
)
from bot.store.events import EventData, new_id
from bot.store.outbox_claims import Claimed, StoreOutbox
from bot.store.ports import Outbox
from bot.store.services import Services

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
Row = dict[str, Any]


class Dispatcher:
    """Sends what is due from the outbox through a Messenger."""

    def __init__(
        self,
        services: Services,
        messenger: Messenger,
        name: str,
        *,
        rng: random.Random | None = None,
        outbox: Outbox | None = None,
    ) -> None:
        self.services = services
        self.store = services.store
        self.settings = services.settings
        self.messenger = messenger
        self.name = name
        self.rng = rng or random.Random()
        self.claim_ttl = timedelta(seconds=2 * self.settings.twilio_timeout_seconds + 60)
        self.batch = BATCH if getattr(messenger, "sends_in_process", False) else 1
        self.outbox: Outbox = outbox or StoreOutbox(
            self.store,
            name,
            claim_ttl=self.claim_ttl,
            template=self.settings.whatsapp_outside_window == "template",
            reconcile=timedelta(seconds=self.settings.send_unknown_reconcile_seconds),
            window=WHATSAPP_WINDOW - WINDOW_MARGIN,
        )

    def run_forever(self, stop: threading.Event, idle_wait: float = 1.0) -> None:
        """Send until `stop` is set; between empty polls wait for an outbox wake-up."""
        while not stop.is_set():
            began = outage.began()
            try:
                handled = self.run_once()
                outage.succeeded(began)
            except Exception as exc:  # noqa: BLE001 - the loop's one broad except: log, go on
                outage.loop_failed(log, exc, f"dispatcher {self.name}")
                handled = 0
            if not handled:
                self.services.signals.outbox.wait(idle_wait)

    def run_once(self, limit: int = 50) -> int:
        """Act on up to `limit` due rows (send, fail, suppress, defer); returns how many."""
        handled, seen = 0, set[str]()
        while handled < limit:
            now = self.services.clock.now()
            batch = self.outbox.candidates(min(limit - handled, self.batch), seen, now)
            if not batch:
                break
            seen.update(candidate["outbox_id"] for candidate in batch)
            handled += self._dispatch(batch)
        return handled

    # -- one batch --------------------------------------------------------------------

    def _dispatch(self, candidates: list[Row]) -> int:
        """Claim the candidates and record what sends nothing in one transaction, send the
        rest with none open, and record their outcomes in one more (the outbox's
        `claim_and_settle` and `record`); returns how many rows were acted on."""
        now = self.services.clock.now()
        acted, to_send = self.outbox.claim_and_settle(
            candidates, now, lambda claimed: self._verdict(claimed, candidates, now)
        )
        outcomes = [(claimed, self._send(claimed, message)) for claimed, message in to_send]
        return acted + self.outbox.record(outcomes, self._opted_out)

    def _verdict(
        self, claimed: Claimed, candidates: list[Row], now: datetime
    ) -> list[EventData] | OutboundMessage | None:
        """An abandoned claim's outcome is unknown; any other row is decided afresh."""
        oid = claimed.row["outbox_id"]
        holder = next(c["claimed_by"] for c in candidates if c["outbox_id"] == oid)
        if holder is not None:
            return self._abandoned(claimed, holder)
        return self._decide(claimed, now)

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

    def _opted_out(
        self, participant: Row, failed: EventData, pending: Callable[[str], list[Row]]
    ) -> list[EventData]:
        """A 21610 from the participant's own phone: they opted out (recorded once).
        `pending` reads a participant's pending timers in the recording transaction."""
        if not (isinstance(failed, MessageFailed) and failed.error_code in OPTED_OUT_CODES):
            return []
        pid = participant["participant_id"]
        now = self.services.clock.now()
        return consent.opt_out(participant, pending(pid), "error_21610", now)

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
