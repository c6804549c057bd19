"""Fidelity review: a reviewer's rating of one bot turn (docs/console.md, Fidelity review)."""

from __future__ import annotations

from pydantic import Field

from bot.store.events import EventData, event, fields


@event("turn.rated")
class TurnRated(EventData):
    """A reviewer rated the bot's message `message_id` (its outbox id) of the participant's
    transcript: `score` 1 to 5, each checklist item of the intervention (`review_checklist:`)
    answered yes or no, and a comment. The comment may quote the transcript, so it is sealed
    with the participant's data key and erased with them. `blind`: rated on the blind page."""

    personal = fields("comment")
    plain = fields("rating_id", "message_id", "by", "intervention", "checks")

    rating_id: str
    message_id: str
    score: int = Field(ge=1, le=5)
    checks: dict[str, bool] = {}
    comment: str | None = None
    by: str
    intervention: str | None = None
    blind: bool = True
