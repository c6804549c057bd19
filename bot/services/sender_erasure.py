"""Erasing what an unknown sender sent: on request (`tandem erase --phone`, the console) or when
UNKNOWN_SENDER_RETENTION_DAYS runs out (the scheduler leader's periodic check, and `tandem
maintenance`).

A number that matches no participant has a stream of its own (`sender:<id>`), sealed under a
data key of its own (bot.channel.inbound). Erasing it is a participant's erasure in small: in
one transaction its unsent notices are suppressed, `sender.erased` is recorded (why, and who
asked), the key is destroyed through the same final path (`tandem_erase_data_key` on
PostgreSQL, made final in the files by `tandem maintenance`) and the number's hash dropped;
every personal field of its messages reads `[erased]` from then on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from bot.core.addresses import InvalidPhoneNumber, canonical_phone
from bot.keys import erasure
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageSuppressed
from bot.store.event_types.senders import SenderErased
from bot.store.events import EventData, NewEvent, sender_stream
from bot.store.queries import (
    enrolled_with_phone,
    pending_outbox_of_stream,
    sender_with_phone,
    senders_keyed_before,
)

log = logging.getLogger(__name__)
RETENTION_REASON = "UNKNOWN_SENDER_RETENTION_DAYS ran out"


@dataclass
class SenderErasure:
    """What erasing one unknown sender did."""

    sender_id: str
    sealed_events: int
    rows_rewritten: int
    suppressed: int
    files: dict[str, Any] = field(default_factory=dict)

    @property
    def pending_maintenance(self) -> bool:
        """Whether the destroyed key's old row version is still in the database files."""
        return bool(self.files.get("pending_maintenance"))


def erase_phone(
    store: EventStore,
    phone: str,
    *,
    reason: str,
    requested_by: str,
    actor: str,
    default_region: str | None = None,
) -> SenderErasure:
    """Erase what the unknown sender with this number sent. Refuses (`Refused`) an invalid
    number, an empty reason, a store without TANDEM_MASTER_KEY, and a number with nothing kept
    (never seen, erased already, expired, or a participant's: erase them by id)."""
    try:
        e164 = canonical_phone(phone, default_region)
    except InvalidPhoneNumber as exc:
        raise Refused(str(exc), "phone", "invalid") from None
    if not reason.strip():
        raise Refused("say why (it is kept with the erasure)", "reason", "invalid")
    if not store.sealer.enabled:
        raise Refused(
            "erasure needs TANDEM_MASTER_KEY: without it messages are stored unsealed and no "
            "key can be destroyed (docs/operations.md)",
            None,
            "conflict",
        )
    with store.reading() as conn:
        sender_id = sender_with_phone(conn, e164, store.sealer.phones)
        participant = enrolled_with_phone(conn, e164, store.sealer.phones)
    if sender_id is None:
        whose = (
            f"; the number is participant {participant['participant_id']}'s: erase them by id"
            if participant is not None
            else ""
        )
        raise Refused(
            "no unknown sender's messages are kept for this number (none received, erased "
            f"already, or expired){whose}",
            "phone",
            "not_found",
        )
    done = _erase(store, sender_id, reason.strip(), "request", requested_by, actor)
    done.files = erasure.scrub_files(store)
    log.info("unknown sender %s erased: %d sealed events", sender_id, done.sealed_events)
    return done


def expired(store: EventStore, now: datetime, days: int) -> list[str]:
    """The unknown senders whose data key is older than `days` days and not destroyed yet."""
    with store.reading() as conn:
        return senders_keyed_before(conn, now - timedelta(days=days))


def expire(
    store: EventStore, now: datetime, days: int, actor: str, *, scrub: bool = True
) -> list[SenderErasure]:
    """Destroy the key of every unknown sender whose key is older than `days` days, each with
    its `sender.erased` (cause `retention`); what was done. Nothing without TANDEM_MASTER_KEY
    (nothing is sealed, so no key can go: docs/operations.md). `scrub`: rewrite the files the
    connected role may afterwards (`tandem maintenance` rewrites them itself)."""
    if not store.sealer.enabled:
        return []
    done = [
        _erase(store, sender_id, RETENTION_REASON, "retention", "retention", actor)
        for sender_id in expired(store, now, days)
    ]
    if done and scrub:
        files = erasure.scrub_files(store)
        for each in done:
            each.files = files
    if done:
        log.info("retention: %d unknown senders' keys destroyed", len(done))
    return done


def _erase(
    store: EventStore, sender_id: str, reason: str, cause: str, requested_by: str, actor: str
) -> SenderErasure:
    stream = sender_stream(sender_id)
    try:
        with store.transaction() as tx:
            tx.lock(stream)
            sealing = erasure.sealing_of(tx, sender_id, stream)
            suppressed: list[EventData] = [
                MessageSuppressed(outbox_id=oid, reason="erased")
                for oid in pending_outbox_of_stream(tx.conn, stream)
            ]
            erased = SenderErased.model_validate(
                {
                    "reason": reason,
                    "cause": cause,
                    "requested_by": requested_by,
                    "sealed_events": sealing.sealed,
                }
            )
            tx.append(stream, [NewEvent(e, meta={"actor": actor}) for e in [*suppressed, erased]])
            rows = erasure.shred_sender(tx, sender_id, store.clock.now())
    except Exception:
        store.sealer.forget(sender_id)  # a rolled-back erasure leaves the key as it was
        raise
    return SenderErasure(sender_id, sealing.sealed, rows, len(suppressed))
