"""Where a `repeat:` counts from (its `from:`, docs/schedules.md): the participant's
enrollment, the last completion of an instrument (`phq9.completed`), the last time a step was
entered (`welcome.entered`), or a date or time in the profile (`profile.quit_date`). Anything
else is refused by the validator at the action's line, never taken to mean "now"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.problems import unknown
from bot.interventions.language.types import name_types

Kind = Literal["enrollment", "completed", "entered", "profile"]
ENROLLMENT = "enrollment"
_DATED = ("date",)


@dataclass(frozen=True)
class SeriesStart:
    """A parsed `from:`: its kind and the instrument, step or profile field it names."""

    kind: Kind
    name: str = ""

    def __str__(self) -> str:
        if self.kind == "enrollment":
            return ENROLLMENT
        if self.kind == "profile":
            return f"profile.{self.name}"
        return f"{self.name}.{self.kind}"


def parse_start(text: str) -> SeriesStart | None:
    """`text` as one of the forms (not checked against an intervention); None if it is none."""
    written = text.strip()
    if written == ENROLLMENT:
        return SeriesStart("enrollment")
    head, _, tail = written.rpartition(".")
    if written.startswith("profile.") and written.count(".") == 1:
        return SeriesStart("profile", tail)
    if head and tail in ("completed", "entered"):
        return SeriesStart(tail, head)  # type: ignore[arg-type]  # tail is one of the two kinds
    return None


def known_starts(intervention: Intervention) -> list[str]:
    """Every `from:` the intervention can count a schedule from."""
    types = name_types(intervention)
    dated = [
        name
        for name in intervention.profile_fields()
        if types.get(f"profile.{name}") is not None and types[f"profile.{name}"].kind in _DATED
    ]
    return [
        ENROLLMENT,
        *(f"{name}.completed" for name in intervention.config.instruments),
        *(f"{slug}.entered" for slug in intervention.steps),
        *(f"profile.{name}" for name in dated),
    ]


def start_problems(text: str, intervention: Intervention) -> list[str]:
    """What is wrong with `from: text` in this intervention: an event it does not have (an
    undeclared instrument, no such step or profile field), or a profile field not a date."""
    start = parse_start(text)
    known = known_starts(intervention)
    if start is not None and str(start) in known:
        return []
    fields = intervention.profile_fields()
    if start is not None and start.kind == "profile" and start.name in fields:
        kind = name_types(intervention).get(f"profile.{start.name}")
        return [
            f"`from: {text}`: profile.{start.name} is {kind or 'untyped'}, not a date; a "
            "schedule counts from a profile field declared with `type: date`"
        ]
    return [
        f"`from: {text}`: {unknown('event', text.strip(), known)} (a schedule counts from "
        "enrollment, <instrument>.completed, <step>.entered or profile.<date field>)"
    ]
