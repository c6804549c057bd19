"""The participant as a turn's events so far leave them (pure): row, recent events, pending timers.

A turn decides in steps (the reply parser, the routing, the module's tools) and is appended
once at the end; each step must see the earlier steps' events as if already recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.conversation.memory import Memory, remembered
from bot.store.events import Event, EventData, NewEvent, new_id, participant_stream
from bot.store.projections import participants
from bot.store.projections.timers import pending_rows as pending_timers


class Working:
    """A participant row and stream that provisional events are folded into."""

    def __init__(
        self,
        participant: Mapping[str, Any],
        history: Sequence[Event],
        now: datetime,
        pending: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """`history` is what the caller loaded of the stream: in a turn, the last messages
        (bot.store.recent), whatever else a decision needs being in the row's `memory`;
        `pending` the participant's pending timers rows (None: folded from `history`)."""
        self.row: dict[str, Any] = dict(participant)
        self.history: list[Event] = list(history)
        self.now = now
        self.pending = None if pending is None else [dict(t) for t in pending]
        self.added: list[Event] = []

    def add(self, decisions: Iterable[EventData]) -> None:
        """Fold `decisions` in, in order, as the store will apply them."""
        for data in decisions:
            NewEvent(data)  # refuses anything that is not a registered event payload
            provisional = Event(
                seq=0,
                event_id=new_id(),
                stream_id=participant_stream(str(self.row.get("participant_id", ""))),
                stream_version=int(self.row.get("version") or 0),
                data=data,
                meta={},
                idempotency_key=None,
                occurred_at=self.now,
                recorded_at=self.now,
            )
            self.row = participants.apply(self.row, provisional) or self.row
            self.history.append(provisional)
            self.added.append(provisional)

    @property
    def state(self) -> str | None:
        return self.row.get("conversation_state")

    def pending_timers(self) -> list[dict[str, Any]]:
        """Pending timers as rows of the timers table (what tools and reactions expect)."""
        if self.pending is not None:
            return pending_timers(self.added, self.pending)
        return pending_timers(self.history)

    @property
    def memory(self) -> Memory:
        """What the participant's stream says, as of the events added so far."""
        return remembered(self.row, self.history)
