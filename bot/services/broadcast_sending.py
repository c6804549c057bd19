"""Sending a broadcast to one due recipient: queued through the outbox, held with a reason, or
deferred to the end of their quiet hours, decided under their stream's lock.

Exactly once: the message (or the hold) is appended on the participant's stream with the
idempotency key `broadcast:<id>`, and the recipient's row is settled in the same transaction,
so a sender that dies at any point and starts again queues nobody twice; from there the
outbox's dispatcher sends each queued row once (docs/sending.md). A recipient is held when
they opted out, left (withdrawn, erased, unenrolled, paused, completed), a staff member holds
their conversation, or WhatsApp's 24-hour window is closed and the broadcast carries no
approved template; the reason is in `broadcast.held` and the progress.

A broadcast that starts a step passes the same holds, then appends `broadcast.step_requested`
(same key, same transaction): a work item whose turn, run by the worker like any other, moves
the conversation to the step and queues its message (bot.conversation.broadcast_turns). A
step's message is written when that turn runs, so it cannot travel as a WhatsApp template: a
WhatsApp participant outside the 24-hour window is held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import jinja2

from bot.channel import outbound
from bot.core.localtime import QuietHours
from bot.reporting.transcript import zone
from bot.services import broadcast_audience as audiences
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.broadcasts import (
    BroadcastDeferred,
    BroadcastHeld,
    BroadcastStepRequested,
)
from bot.store.event_types.messages import MessageQueued
from bot.store.events import EventData, NewEvent, participant_stream
from bot.store.projections.broadcast_recipients import recipient_id
from bot.store.reads import broadcasts as reads
from bot.timers import quiet_hours

Outcome = Literal["queued", "started", "held", "deferred", "settled"]
WHATSAPP_WINDOW = timedelta(hours=24) - timedelta(minutes=5)  # as the dispatcher's margin
TEMPLATE_TEXT_LIMIT = 1000


@dataclass
class QuietRules:
    """The quiet hours that apply: QUIET_HOURS, unless an intervention or profile has its own."""

    default: QuietHours | None = None
    by_intervention: Mapping[str, QuietHours | None] | None = None


class BroadcastSender:
    """Settles due recipients one at a time; broadcasts' rows and templates cached."""

    def __init__(self, store: EventStore, quiet: QuietRules | None = None) -> None:
        self.store = store
        self.quiet = quiet or QuietRules()
        self._broadcasts: dict[str, tuple[dict[str, Any], jinja2.Template | None]] = {}
        self._heads = next(p for p in store.projections if p.name == "participants")
        self._takeovers = next(p for p in store.projections if p.name == "takeovers")
        self._recipients = next(p for p in store.projections if p.name == "broadcast_recipients")
        self._rows = next(p for p in store.projections if p.name == "broadcasts")

    def due(self, now: datetime, limit: int) -> list[dict[str, Any]]:
        return reads.due_recipients(self.store, now, limit)

    def send(self, due: Mapping[str, Any], now: datetime) -> tuple[Outcome, int]:
        """Settle one due recipient: the outcome and how many messages it queued (a step
        started counts its one message, queued by its turn)."""
        broadcast, template = self._broadcast(due["broadcast_id"])
        pid, bid = due["participant_id"], due["broadcast_id"]
        stream = participant_stream(pid)
        with self.store.transaction() as tx:
            tx.lock(stream)
            recipient = tx.row(self._recipients, recipient_id(bid, pid))
            row = tx.row(self._heads, pid)
            current = tx.row(self._rows, bid)  # cancelled since it was read?
            if recipient is None or recipient["status"] != "pending" or row is None:
                return "settled", 0
            if current is None or current["status"] != "active":
                return "settled", 0
            decided = self._decide(tx, broadcast, template, dict(row), now)
            deferred = isinstance(decided[0], BroadcastDeferred)
            key = None if deferred else f"broadcast:{bid}"
            meta = {"actor": f"broadcast:{bid}"}
            tx.append(stream, [NewEvent(e, meta=meta) for e in decided], None, key)
        if deferred:
            return "deferred", 0
        if isinstance(decided[0], BroadcastHeld):
            return "held", 0
        if isinstance(decided[0], BroadcastStepRequested):
            return "started", 1
        return "queued", len(decided)

    def _decide(
        self,
        tx: Transaction,
        broadcast: Mapping[str, Any],
        template: jinja2.Template | None,
        row: dict[str, Any],
        now: datetime,
    ) -> list[EventData]:
        bid = broadcast["broadcast_id"]

        def held(reason: str) -> list[EventData]:
            return [BroadcastHeld(broadcast_id=bid, reason=reason)]

        if row["opted_out"]:
            return held("opted out")
        if row["status"] != "active":
            return held(f"participant {row['status']}")
        takeover = tx.row(self._takeovers, row["participant_id"])
        if takeover is not None and takeover["status"] == "active":
            return held("conversation taken over by staff")
        tz = zone(row["timezone"])
        quiet = quiet_hours.for_participant(row, self.quiet.default, self.quiet.by_intervention)
        if quiet is not None and quiet.contains(now, tz):
            until = quiet.end_after(now, tz)
            return [BroadcastDeferred(broadcast_id=bid, until=until, reason="quiet hours")]
        if broadcast.get("step"):
            if _window_closed(row, now):
                return held("WhatsApp 24-hour window closed: a step's message cannot be a template")
            return [BroadcastStepRequested(broadcast_id=bid, step=broadcast["step"])]
        assert template is not None  # a broadcast without a step has a message
        try:
            text = audiences.render(template, row)
        except jinja2.TemplateError as exc:
            return held(f"the message does not render: {exc}")
        if not text:
            return held("the message renders empty")
        if _window_closed(row, now):
            sid = broadcast["whatsapp_template"]
            if not sid:
                return held("WhatsApp 24-hour window closed and the broadcast has no template")
            return [_as_template(row, text, sid, bid)]
        return [
            message.model_copy(update={"broadcast_id": bid})
            for message in outbound.to_participant(row, text, kind="broadcast")
        ]

    def _broadcast(self, broadcast_id: str) -> tuple[dict[str, Any], jinja2.Template | None]:
        if broadcast_id not in self._broadcasts:
            row = reads.broadcast(self.store, broadcast_id)
            assert row is not None  # a due recipient's broadcast exists: it was planned with it
            template = None if row.get("step") else audiences.compile_message(row["message"])
            self._broadcasts[broadcast_id] = (row, template)
        return self._broadcasts[broadcast_id]


def _window_closed(row: Mapping[str, Any], now: datetime) -> bool:
    """A free-form WhatsApp message more than 24 hours after the participant last wrote."""
    if row["channel"] != "whatsapp":
        return False
    last = row["last_inbound_at"]
    return last is None or now >= last + WHATSAPP_WINDOW


def _as_template(row: Mapping[str, Any], text: str, sid: str, bid: str) -> MessageQueued:
    """The approved template carrying the text as {{1}} (one line, as WhatsApp requires)."""
    [queued] = outbound.to_participant(row, text[:1600], kind="broadcast")
    variable = " ".join(text.split())
    if len(variable) > TEMPLATE_TEXT_LIMIT:
        variable = variable[: TEMPLATE_TEXT_LIMIT - 1] + "…"
    return queued.model_copy(
        update={"broadcast_id": bid, "content_sid": sid, "content_variables": {"1": variable}}
    )
