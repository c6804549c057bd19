"""Updating a participant: profile fields, and a status change with what follows it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.services import participant_lock
from bot.services.enrolled_only import check_still_enrolled
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types import ParticipantStatusChanged, ParticipantUpdated
from bot.store.events import EventData, participant_stream
from bot.store.queries import pending_timers
from bot.timers import lifecycle

PROFILE_FIELDS = (
    "name",
    "gender",
    "ethnicity",
    "background",
    "timezone",
    "debug",
    "intervention",
    "channel",
)


def update(
    store: EventStore,
    participant_id: str,
    given: Mapping[str, Any],
    *,
    actor: str,
    now: datetime,
    reason: str,
    expected_version: int | None = None,
    leave_withdrawn: bool = False,
) -> dict[str, Any]:
    """Record the fields of `given` that differ (`participant.updated`); a new `status` also
    pauses, resumes or ends their timers (`reason` is kept with the status change). The
    caller checks the values (an intervention against the catalogue). Returns their row.

    `expected_version`: the version the caller's picture of the participant shows; anything
    recorded since refuses the change (a conflict). `leave_withdrawn`: refuse to change a
    withdrawn participant (the console, whose withdrawal is its own act with a reason)."""

    def decide(tx: Transaction, row: dict[str, Any]) -> list[EventData]:
        if leave_withdrawn and row["status"] in ("withdrawn", "unenrolled", "erased"):
            raise Refused(
                f"The participant is {row['status']}; nothing was applied.", kind="conflict"
            )
        check_still_enrolled(row)
        if expected_version is not None and row["version"] != expected_version:
            raise Refused(
                "The participant changed since this page was drawn (version "
                f"{expected_version}, now {row['version']}); nothing was applied. Check and "
                "try again.",
                kind="conflict",
            )
        changes = {k: v for k, v in given.items() if k in PROFILE_FIELDS and row.get(k) != v}
        decided: list[EventData] = [ParticipantUpdated(changes=changes)] if changes else []
        status = given.get("status")
        if status is not None and status != row["status"]:
            decided.append(ParticipantStatusChanged(status=status, reason=reason))
            decided += lifecycle.on_status_change(
                {**row, **changes, "status": status},
                pending_timers(tx.conn, participant_id),
                status,
                now,
                events=tx.load(participant_stream(participant_id)),
            )
        return decided

    return participant_lock.change(store, participant_id, decide, actor=actor)[0]
