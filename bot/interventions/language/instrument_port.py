"""What the language and the interpreter need of an intervention's instruments
(intervention.yaml `instruments: [phq9]`), as a port: the instruments themselves (reading
their files, scoring, parsing replies) live in `bot.instruments`, a layer above, which builds
the adapter (`bot.instruments.administration.Catalogue`) and hands it to the intervention."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from bot.store.events import EventData


@dataclass(frozen=True)
class Opening:
    """The first message of an administration: its text, the item it asks (None: every item
    at once), the mode, and the silence after which the administration is abandoned."""

    instrument: str
    text: str
    item: str | None
    mode: str
    abandon_minutes: float


@dataclass
class Administered:
    """What a reply to an administration decided: its events, the reply to send (None: the
    message is not about the administration) and whether the administration ended complete,
    or was abandoned (after its re-asks)."""

    events: list[EventData] = field(default_factory=list)
    reply: str | None = None
    completed: bool = False
    abandoned: bool = False


class Instruments(Protocol):
    """An intervention's instruments, by name."""

    def names(self) -> list[str]: ...

    def types(self) -> dict[str, Any]:
        """Every `instruments.<name>.last.*` name with its type (language.types.Type)."""
        ...

    def data(self, stored: Mapping[str, Any], now: datetime) -> dict[str, Any]:
        """`instruments` as conditions see it at `now`, from the row's
        `step_counters.instruments`."""
        ...

    def samples(self) -> dict[str, Any]:
        """`instruments` with a representative value for every name (the validator's)."""
        ...

    def opening(self, name: str) -> Opening: ...

    def read(
        self,
        administering: Mapping[str, Any],
        stored: Mapping[str, Any],
        reply: str,
        now: datetime,
    ) -> Administered:
        """The events and reply for `reply` to the administration in progress
        (`step_counters.administering`; `stored` is `step_counters.instruments`)."""
        ...
