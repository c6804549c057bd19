"""Rating a bot turn for fidelity: a reviewer's score (1-5), the intervention's checklist
(`review_checklist:`) answered yes/no, and a comment, recorded as `turn.rated` on the
participant's stream. The console's review page calls it (docs/console.md, Fidelity review)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from bot.services import participant_lock
from bot.services.refusal import Refused
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.ratings import TurnRated
from bot.store.events import EventData
from bot.store.reads.ratings import outbound_message

COMMENT_LIMIT = 2000
# What the bot wrote: not a staff member's message, a broadcast, an alert or a debug trace.
NOT_BOT_TURNS = ("staff", "broadcast", "alert", "debug")


def rate(
    store: EventStore,
    participant_id: str,
    message_id: str,
    *,
    score: Any,
    checks: Mapping[str, bool],
    checklist: Sequence[str],
    comment: str,
    by: str,
    intervention: str | None,
    blind: bool = True,
) -> TurnRated:
    """Record `by`'s rating of the bot's message `message_id` to the participant. Refuses a
    score that is not a whole number 1 to 5, a checklist answer to an item the intervention
    does not declare (`checklist`: its keys), an overlong comment, and a message that is not
    a bot turn of this participant's transcript."""
    problems: dict[str, str] = {}
    number = _score(score)
    if number is None:
        problems["score"] = "choose a score from 1 (poor) to 5 (excellent)"
    unknown = sorted(set(checks) - set(checklist))
    if unknown:
        problems["checks"] = f"not on the intervention's checklist: {', '.join(unknown)}"
    comment = comment.strip()
    if len(comment) > COMMENT_LIMIT:
        problems["comment"] = f"at most {COMMENT_LIMIT} characters"
    row = outbound_message(store, message_id)
    if row is None or row.get("participant_id") != participant_id:
        raise Refused("no message with this id in this transcript", "message_id", "not_found")
    if row.get("kind") in NOT_BOT_TURNS:
        problems["message_id"] = f"a {row.get('kind')} message is not a bot turn"
    if problems:
        field, message = next(iter(problems.items()))
        raise Refused(message, field, problems=problems)
    assert number is not None
    rated = TurnRated(
        rating_id=str(uuid.uuid4()),
        message_id=message_id,
        score=number,
        checks={key: bool(checks.get(key, False)) for key in checklist},
        comment=comment or None,
        by=by,
        intervention=intervention,
        blind=blind,
    )

    def decide(_tx: Transaction, _row: dict[str, Any]) -> list[EventData]:
        return [rated]

    participant_lock.change(store, participant_id, decide, actor=by)
    return rated


def _score(value: Any) -> int | None:
    text = str(value).strip()
    if not text.isdigit() or not 1 <= int(text) <= 5:
        return None
    return int(text)
