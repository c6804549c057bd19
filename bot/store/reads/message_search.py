"""Named reads for message search: whose transcripts a staff member's search may scan."""

from __future__ import annotations

from sqlalchemy import or_, select

from bot.store.event_store import EventStore
from bot.store.schema import alerts, participants


def searchable_ids(store: EventStore, *, supervisor: bool, only: str | None = None) -> list[str]:
    """Participant ids (sorted): every participant, or for a supervisor only those
    with an alert for supervisors (a crisis, a review item, or one texted to them) — the same
    rule as the participant page; `only` narrows it to one participant."""
    query = select(participants.c.participant_id).order_by(participants.c.participant_id)
    if supervisor:
        flagged = select(alerts.c.participant_id).where(
            or_(
                alerts.c.kind == "crisis",
                alerts.c.severity == "review",
                alerts.c.notify_supervisors.is_(True),
            )
        )
        query = query.where(participants.c.participant_id.in_(flagged))
    if only is not None:
        query = query.where(participants.c.participant_id == only)
    with store.reading() as conn:
        return [r.participant_id for r in conn.execute(query).all()]
