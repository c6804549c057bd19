"""The format of a decision file (`decisions/<name>.md` in an intervention folder): when its
decision points come, when the participant counts as available, the options and their
probabilities, the proximal outcome and the moderators. Pydantic models of the front matter;
`decisions_check` says what is wrong with one, at file:line. docs/decisions.md has every key."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema

from bot.interventions.language.format import Duration, Strict

NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # option and moderator names become column names
TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
WINDOW = re.compile(r"^\s*(\d\d:\d\d)\s*-\s*(\d\d:\d\d)\s*$")
EVENTS = ("message.received", "step.entered")
DEFAULT_BOUNDS = (0.1, 0.9)
SUM_TOLERANCE = 1e-9
# Why a decision point may find the participant unavailable, besides `available:` being false.
UNAVAILABLE = (
    "opted_out", "withdrawn", "paused", "takeover", "quiet_hours", "window_closed", "condition",
)  # fmt: skip
MODERATOR_KINDS = {"bool": ("yes/no",), "int": ("integer",), "number": ("integer", "number")}


def _not_bool(value: Any) -> Any:
    """YAML's `yes`/`true` is no probability (pydantic would read it as 1.0)."""
    if isinstance(value, bool):
        raise ValueError("a probability is a number such as 0.3, or an expression")
    return value


Probability = Annotated[
    float | str,
    BeforeValidator(_not_bool),
    WithJsonSchema({"type": ["number", "string"], "examples": [0.5, "0.2 + profile.boost"]}),
]


class When(Strict):
    """When decision points come: at fixed local `times`, at `per_day` random times in each
    of the `windows`, or `on` an event (a message received, a step entered: `step` names it)."""

    times: list[str] | None = None
    windows: list[str] | None = None
    per_day: int | None = None
    on: Literal["message.received", "step.entered"] | None = None
    step: str | None = None

    def window_minutes(self) -> list[tuple[int, int]]:
        """Each well-written window as (start, end) minutes after midnight."""
        found = []
        for window in self.windows or ():
            match = WINDOW.match(window)
            if match and TIME.match(match[1]) and TIME.match(match[2]):
                found.append((_minutes(match[1]), _minutes(match[2])))
        return found


class Option(Strict):
    """One option: `send` a template, `start` a step, or neither (do nothing), drawn with
    `probability` (a number, or an expression clipped to the decision's `bounds`)."""

    name: str
    send: str | None = None
    start: str | None = None
    probability: Probability

    @property
    def constant(self) -> float | None:
        return self.probability if isinstance(self.probability, float) else None


class Outcome(Strict):
    """The proximal outcome, one of: `reply` (yes/no, or the latency in minutes) `within` a
    time; `ask` a question `after` a delay and take its answer until `window` has passed;
    `judge` the window's messages with a judgement (its `field`); `count` the messages
    received or sent in the `window`."""

    reply: Literal["yes/no", "latency"] | None = None
    within: Duration | None = None
    ask: str | None = None
    after: Duration | None = None
    judge: str | None = None
    field: str | None = None
    count: Literal["received", "sent"] | None = None
    window: Duration | None = None

    @property
    def measure(self) -> str | None:
        """Which outcome this is (reply, ask, judge or count); None if none or several."""
        given = [k for k in ("reply", "ask", "judge", "count") if getattr(self, k) is not None]
        return given[0] if len(given) == 1 else None

    def kind(self) -> str | None:
        """ "yes/no" or "number" for the analysis; None when the question's or judgement's
        type decides it (the integrator looks it up)."""
        if self.reply == "yes/no":
            return "yes/no"
        if self.reply == "latency" or self.count is not None:
            return "number"
        return None

    def length(self) -> timedelta | None:
        """How long after the decision point the outcome is known."""
        return self.within if self.reply is not None else self.window


class Moderator(Strict):
    """A value recorded at each decision point (an expression of the condition language), of
    a declared type: bool, int or number (the analysis needs numbers)."""

    type: Literal["bool", "int", "number"]
    value: str
    description: str | None = None


class Decision(Strict):
    """The front matter of a decision file."""

    description: str | None = None
    when: When
    available: str | None = None
    options: list[Option] = Field(min_length=2)
    bounds: tuple[float, float] = DEFAULT_BOUNDS
    outcome: Outcome
    moderators: dict[str, Moderator] = {}

    def probabilities(self) -> dict[str, float] | None:
        """Each option's constant probability, in declared order; None if one is an
        expression (its sum is checked when it runs)."""
        found = {o.name: o.constant for o in self.options}
        return None if None in found.values() else {k: v for k, v in found.items() if v is not None}


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)
