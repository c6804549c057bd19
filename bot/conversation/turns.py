"""A turn: what a handler is given for one work item, and what it hands back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bot.store.events import Event, EventData, NewEvent


@dataclass
class Turn:
    """One work item of one participant, with the state it is decided on.

    `trigger` is the event that created the item (the message, the enrollment, the command) and
    `timer` the timers row for a timer item. What a turn decides on is the participant row
    (with its `memory`, bot.conversation.memory) and `pending`, their pending timers rows;
    `history()` loads, lazily, only the last messages of the stream (bot.store.recent), never
    all of it.
    Without `pending` (a turn built by hand), pending timers are folded from `history()`.
    """

    participant: Mapping[str, Any]
    item: Mapping[str, Any]
    now: datetime
    trigger: Event | None = None
    timer: Mapping[str, Any] | None = None
    load_history: Callable[[], list[Event]] | None = None
    pending: list[dict[str, Any]] | None = None
    _history: list[Event] | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return str(self.item["kind"])

    def history(self) -> list[Event]:
        if self._history is None:
            self._history = self.load_history() if self.load_history else []
        return self._history


Handler = Callable[[Turn], Sequence[EventData | NewEvent]]
