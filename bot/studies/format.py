"""The study format as pydantic models: study.yaml, its arms, its allocation methods, the
optional second stage and its declared (recurring) broadcasts. docs/studies.md explains every
key; cross-checks live in checks.py."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from bot.interventions.language.format import Duration, FieldSpec, Strict, Text

ArmValue = str | int | float | bool
Ratio = dict[str, Annotated[int, Field(ge=1)]]
METHODS = ("simple", "blocks", "stratified", "minimisation")


class Arm(Strict):
    """What participants allocated to the arm get: an intervention, and values of the study's
    declared variables that the intervention reads as `arm.<name>`."""

    intervention: str
    description: str | None = None
    variables: dict[str, ArmValue | list[str]] = {}


class Simple(Strict):
    """Each participant independently, with probability proportional to the arm's ratio."""

    method: Literal["simple"]
    ratio: Ratio


class Blocks(Strict):
    """Permuted blocks, each of a size drawn at random from `block_sizes`."""

    method: Literal["blocks"]
    ratio: Ratio
    block_sizes: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)


class Stratified(Strict):
    """Permuted blocks, one sequence per stratum (each combination of the `strata` fields)."""

    method: Literal["stratified"]
    ratio: Ratio
    block_sizes: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    strata: list[str] = Field(min_length=1)


class Minimisation(Strict):
    """Pocock-Simon minimisation over `factors`: the arm that least unbalances the factors'
    margins is taken with `probability`, another arm otherwise."""

    method: Literal["minimisation"]
    ratio: Ratio
    factors: list[str] = Field(min_length=1)
    probability: float = 0.8

    @field_validator("probability")
    @classmethod
    def _above_half(cls, value: float) -> float:
        if not 0.5 < value <= 1:
            raise ValueError(
                f"the probability of the preferred arm must be above 0.5 and at most 1, not "
                f"{value:g} (0.5 would be simple randomisation)"
            )
        return value


AllocationMethod = Annotated[
    Simple | Blocks | Stratified | Minimisation, Field(discriminator="method")
]


class Trigger(Strict):
    """When stage 2 happens: on entering a step of the stage-1 arm's intervention (a
    transition), or a time after the stage-1 allocation (a timer)."""

    step: str | None = None
    after: Duration | None = None

    @field_validator("step")
    @classmethod
    def _named(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("name the step whose entry starts stage 2")
        return value

    @model_validator(mode="after")
    def _one(self) -> Trigger:
        if (self.step is None) == (self.after is None):
            raise ValueError("stage 2 starts either at a `step` or `after` a time, one of them")
        return self


class Stage2(Strict):
    """Re-randomisation (SMART designs): at `at`, participants of the `after` arms for whom
    `when` holds are randomised again among the arms of `allocation.ratio`."""

    at: Trigger
    when: str
    after: list[str] | None = None  # the stage-1 arms concerned (default: all of them)
    allocation: AllocationMethod


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


class BroadcastFilter(Strict):
    """Who a declared broadcast reaches among the study's active participants: an arm, and a
    profile condition in the intervention language (typed against the arm's intervention)."""

    arm: str | None = None
    condition: str | None = None


class BroadcastSchedule(Strict):
    """When: every day, or every week on `weekday`, at `time` (HH:MM, quoted) in each
    participant's own timezone."""

    every: Literal["day", "week"]
    weekday: Literal[WEEKDAYS] | None = None  # type: ignore[valid-type]  # the tuple's values
    time: str = Field(json_schema_extra={"pattern": CLOCK.pattern, "examples": ["09:00"]})

    @field_validator("time", mode="before")
    @classmethod
    def _clock(cls, value: object) -> object:
        if isinstance(value, int):  # YAML 1.1 reads an unquoted 18:30 as 1110 (base 60)
            hours, minutes = divmod(value, 60)
            raise ValueError(
                f'quote the time: "{hours:02d}:{minutes:02d}" (unquoted it is a number)'
            )
        if isinstance(value, str) and not CLOCK.match(value):
            raise ValueError(f'{value!r} is not a local time HH:MM such as "09:00" (quote it)')
        return value

    @model_validator(mode="after")
    def _weekday(self) -> BroadcastSchedule:
        if self.every == "week" and self.weekday is None:
            raise ValueError("a weekly broadcast needs its `weekday` (monday ... sunday)")
        if self.every == "day" and self.weekday is not None:
            raise ValueError("a daily broadcast has no `weekday` (or write `every: week`)")
        return self


class DeclaredBroadcast(Strict):
    """A broadcast the study makes on a schedule: a message (a Jinja2 template) or a step to
    start, to the participants of `filter`, each occurrence from `start` to `end` (dates, both
    optional) recorded as an ordinary broadcast."""

    title: str | None = None
    filter: BroadcastFilter = BroadcastFilter()
    message: str | None = Field(None, min_length=1, max_length=1600)
    step: str | None = Field(None, min_length=1, max_length=100)
    schedule: BroadcastSchedule
    start: date | None = None
    end: date | None = None

    @model_validator(mode="after")
    def _what(self) -> DeclaredBroadcast:
        if (self.message is None) == (self.step is None):
            raise ValueError("a declared broadcast sends a `message` or starts a `step`, one")
        if self.start and self.end and self.end < self.start:
            raise ValueError(f"`end` ({self.end}) is before `start` ({self.start})")
        return self


class Study(Strict):
    """study.yaml."""

    title: Text
    version: Text = "1"
    description: str | None = None
    blinded: bool = False
    baseline: dict[str, FieldSpec] = {}
    variables: dict[str, FieldSpec] = {}
    arms: dict[str, Arm]
    allocation: AllocationMethod
    stage2: Stage2 | None = None
    broadcasts: dict[str, DeclaredBroadcast] = {}
