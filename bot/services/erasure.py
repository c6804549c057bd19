"""Erasing a participant: their personal data is destroyed (crypto-shredding), everywhere at once.

One act, `erase`, for the API, the CLI and the console (the key destruction itself is
`bot.keys.erasure`). In one transaction it
suppresses every unsent message, cancels every timer, records `participant.erased` (who asked
and why), destroys the participant's data key and rebuilds their projection rows, so that the
API, the transcript, exports and replay show `[erased]` from then on; then it rewrites the
database files so that no freed page keeps the plaintext. Withdrawal is the other act: contact
stops and the data stays (`bot.services.withdrawal`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.keys import erasure
from bot.services.refusal import Kind, Refused
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageSuppressed
from bot.store.event_types.participants import ParticipantErased
from bot.store.events import EventData, NewEvent, participant_stream
from bot.store.queries import pending_outbox, pending_timers
from bot.timers import lifecycle

log = logging.getLogger(__name__)


def _refused(message: str, kind: Kind = "conflict", field: str | None = None) -> Refused:
    """A refusal whose message already names its field, as erasure's always have."""
    refused = Refused(message, field, kind)
    refused.args = (message,)
    return refused


@dataclass
class Erased:
    """What an erasure did."""

    participant_id: str
    sealed_events: int
    rows_rewritten: int
    suppressed: int
    cancelled: int
    files: dict[str, Any] = field(default_factory=dict)

    @property
    def pending_maintenance(self) -> bool:
        """Whether the destroyed key's old row version is still in the database files (the
        PostgreSQL app role cannot VACUUM: `tandem maintenance` removes it)."""
        return bool(self.files.get("pending_maintenance"))

    @property
    def finality(self) -> str:
        """What is done now and what completes when, as every entry point says it."""
        backups = (
            "backups and WAL archives made before now keep it until the master key they were "
            "made under is retired (docs/operations.md)"
        )
        if self.pending_maintenance:
            return (
                "their data key is destroyed now; its old row version stays in the database "
                f"files until the next `tandem maintenance` run by the schema owner; {backups}"
            )
        return f"their data key is destroyed now and the database files rewritten; {backups}"


def check_confirmation(participant_id: str, confirm: str | None) -> None:
    """The caller must repeat the participant's id: an erasure cannot be undone."""
    if confirm != participant_id:
        raise _refused(
            f"confirm: erasure cannot be undone; repeat the participant id ({participant_id}) "
            "in `confirm` to erase this participant",
            "invalid",
            "confirm",
        )


def erase(
    store: EventStore,
    participant_id: str,
    *,
    confirm: str | None,
    reason: str,
    requested_by: str,
    actor: str,
) -> Erased:
    """Erase the participant's personal data, recording who asked (`requested_by`, `actor`)
    and why. Refuses (`Refused`) without confirmation, without TANDEM_MASTER_KEY, for an
    unknown or already erased participant, or when some of their events were recorded unsealed
    (before the master key was set) and would stay readable."""
    check_confirmation(participant_id, confirm)
    if not reason.strip():
        raise _refused("reason: say why (it is kept with the erasure)", "invalid", "reason")
    if not store.sealer.enabled:
        raise _refused(
            "erasure needs TANDEM_MASTER_KEY: without it personal data is stored unsealed and "
            "no key can be destroyed (docs/operations.md)"
        )
    try:
        sealing, suppressed, cancelled, rows = _in_transaction(
            store, participant_id, reason.strip(), requested_by, actor
        )
    except Exception:
        store.sealer.forget(participant_id)  # a rolled-back erasure leaves the key as it was
        raise
    files = erasure.scrub_files(store)
    log.info(
        "participant %s erased: %d sealed events, %d projection rows rewritten",
        participant_id,
        sealing.sealed,
        rows,
    )
    return Erased(participant_id, sealing.sealed, rows, suppressed, cancelled, files)


def _in_transaction(
    store: EventStore, participant_id: str, reason: str, requested_by: str, actor: str
) -> tuple[erasure.Sealing, int, int, int]:
    stream = participant_stream(participant_id)
    now = store.clock.now()
    with store.transaction() as tx:
        row = tx.lock(stream)
        if row is None:
            raise _refused(f"no participant {participant_id!r}", "not_found", "participant_id")
        if row["status"] == "erased":
            raise _refused("the participant is already erased", "conflict", "participant_id")
        sealing = erasure.sealing_of(tx, participant_id)
        if sealing.unsealed:
            raise _refused(
                f"{sealing.unsealed} of this participant's events were recorded before "
                "TANDEM_MASTER_KEY was set: their personal data is not sealed and would stay "
                "readable, so nothing was erased (docs/operations.md)"
            )
        suppressed: list[EventData] = [
            MessageSuppressed(outbox_id=oid, reason="erased")
            for oid in pending_outbox(tx.conn, participant_id)
        ]
        cancelled = lifecycle.on_status_change(
            {**row, "status": "erased"}, pending_timers(tx.conn, participant_id), "erased", now
        )
        erased = ParticipantErased(
            reason=reason,
            requested_by=requested_by,
            sealed_events=sealing.sealed,
        )
        decided = [*suppressed, *cancelled, erased]
        tx.append(stream, [NewEvent(e, meta={"actor": actor}) for e in decided], row["version"])
        rows = erasure.shred(tx, participant_id, now)
    return sealing, len(suppressed), len(cancelled), rows
