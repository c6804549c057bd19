"""evaluations.csv, folded from a participant's `turn.rated` events (pure): one row per rating
of a bot turn (bot.services.ratings), with one `check_<key>` column per checklist item the
codebook describes (`review_checklist:` of the interventions exported)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from bot.reporting.results import Column
from bot.store.event_types.ratings import TurnRated
from bot.store.events import Event

CHECK = "check_"
EVALUATION_COLUMNS = (
    Column("participant_id", "text", "the participant whose transcript holds the turn"),
    Column("intervention", "text", "the participant's intervention when the turn was rated"),
    Column("message_id", "text", "the rated bot turn (messages.csv's message_id)"),
    Column("rating_id", "text", "the rating's id (its turn.rated event carries it)"),
    Column("rater", "text", "who rated it (staff:<email>)"),
    Column("rated_at_utc", "datetime", "when it was rated"),
    Column("score", "int", "the reviewer's score, 1 (poor) to 5 (excellent)"),
    Column("blind", "bool", "rated on the blind review page (no identity, arm or intervention)"),
    Column("comment", "text", "the reviewer's comment (blank: none)"),
)
EVALUATION_FIXED = tuple(column.name for column in EVALUATION_COLUMNS)
EVALUATION_TYPES = (TurnRated.event_type,)


def evaluation_columns(checks: Iterable[str]) -> tuple[str, ...]:
    """evaluations.csv's columns: each `check_<key>` of `checks` before the comment."""
    at = EVALUATION_FIXED.index("comment")
    return (*EVALUATION_FIXED[:at], *checks, *EVALUATION_FIXED[at:])


def evaluation_rows(
    history: Iterable[Event], row: dict[str, Any], since: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per rating, in order; `since` keeps those rated from then. A checklist answer
    is 1 (yes) or 0 (no); an item not on the checklist the turn was rated with is blank."""
    found = []
    for ev in history:
        data = ev.data
        if not isinstance(data, TurnRated) or (since is not None and ev.occurred_at < since):
            continue
        found.append(
            {
                "participant_id": row["participant_id"],
                "intervention": data.intervention,
                "message_id": data.message_id,
                "rating_id": data.rating_id,
                "rater": data.by,
                "rated_at_utc": ev.occurred_at,
                "score": data.score,
                "blind": data.blind,
                "comment": data.comment,
                **{f"{CHECK}{key}": int(answer) for key, answer in data.checks.items()},
            }
        )
    return found
