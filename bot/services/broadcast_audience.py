"""Who a broadcast reaches and what each of them reads: the filter (study, arm, intervention,
status and a typed profile condition in the intervention language), the message template
(sandboxed Jinja2, rendered per participant) and the moment each one's message is due (now,
or a local time in the participant's own timezone)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from bot.core.localtime import clock_reaches
from bot.interventions.language.expressions import Condition, ConditionError, compile_condition
from bot.interventions.language.loader import load_intervention
from bot.interventions.language.typecheck import condition_type_problems
from bot.interventions.language.types import Type, name_types
from bot.interventions.validation.catalogue import Catalogue
from bot.reporting.transcript import zone
from bot.services.refusal import Refused

STATUSES = ("active", "paused", "completed", "withdrawn", "unenrolled", "erased")
CONDITION_ROOTS = ("profile",)
MESSAGE_LIMIT = 1600
CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_ENV = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)


@dataclass(frozen=True)
class Audience:
    """A checked filter: the columns to match and the compiled profile condition."""

    study: str | None = None
    arm: str | None = None
    intervention: str | None = None
    status: str = "active"
    condition: Condition | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "arm": self.arm,
            "intervention": self.intervention,
            "status": self.status,
            "condition": self.condition.source if self.condition else None,
        }

    def admits(self, row: Mapping[str, Any]) -> bool:
        """Whether the profile condition holds for the participant (a missing field: no)."""
        if self.condition is None:
            return True
        return self.condition.evaluate({"profile": dict(row.get("profile") or {})})


def profile_types(catalogue: Catalogue, intervention: str | None) -> dict[str, Type]:
    """The typed `profile.*` names of the intervention (or of every usable one: a name typed
    differently by two of them is checked as `any`)."""
    slugs = [intervention] if intervention else catalogue.valid()
    types: dict[str, Type] = {}
    for slug in slugs:
        for name, kind in name_types(load_intervention(catalogue.root / slug)).items():
            if not name.startswith("profile."):
                continue
            types[name] = kind if types.get(name, kind) == kind else Type("any")
    return types


def check_audience(raw: Mapping[str, Any], catalogue: Catalogue) -> Audience:
    """The filter as given, checked: a known status and intervention, and a condition that
    parses and type-checks against the profile fields; Refused naming the field otherwise."""
    status = raw.get("status") or "active"
    if status not in STATUSES:
        raise Refused(f"one of {', '.join(STATUSES)}", "filter.status")
    intervention = raw.get("intervention") or None
    if intervention is not None:
        reason = catalogue.refusal(intervention)
        if reason:
            raise Refused(reason, "filter.intervention")
    source = (raw.get("condition") or "").strip()
    condition = None
    if source:
        try:
            condition = compile_condition(source, CONDITION_ROOTS)
        except ConditionError as exc:
            raise Refused(f"`{source}`: {exc}", "filter.condition") from None
        types = profile_types(catalogue, intervention)
        unknown = sorted(n for n in condition.names() if n not in types)
        if unknown:
            known = ", ".join(sorted(types)) or "none"
            raise Refused(
                f"unknown name(s) {', '.join(unknown)}; profile fields: {known}",
                "filter.condition",
            )
        problems = condition_type_problems(condition, types)
        if problems:
            raise Refused("; ".join(problems), "filter.condition")
    return Audience(
        study=raw.get("study") or None,
        arm=raw.get("arm") or None,
        intervention=intervention,
        status=status,
        condition=condition,
    )


def compile_message(source: str) -> jinja2.Template:
    """The message template, sandboxed; Refused with the line of a syntax error."""
    if not source.strip() or len(source) > MESSAGE_LIMIT:
        raise Refused(f"write a message of 1 to {MESSAGE_LIMIT} characters", "message")
    try:
        return _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise Refused(f"line {exc.lineno}: {exc.message}", "message") from None


def render(template: jinja2.Template, row: Mapping[str, Any]) -> str:
    """The participant's text; jinja2 errors (an unknown name...) propagate to the caller."""
    participant = {
        key: row.get(key)
        for key in ("participant_id", "name", "timezone", "channel", "study", "arm")
    }
    participant["intervention"] = row.get("intervention")
    context = {
        "participant": participant,
        "profile": dict(row.get("profile") or {}),
        "arm": {"name": row.get("arm")},
    }
    return template.render(context).strip()


def check_send_at(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """`{"mode": "now"}` or `{"mode": "local", "time": "HH:MM"[, "date": "YYYY-MM-DD"]}`."""
    raw = dict(raw or {"mode": "now"})
    mode = raw.get("mode", "now")
    if mode == "now":
        return {"mode": "now"}
    if mode != "local":
        raise Refused("`now` or `local`", "send_at.mode")
    clock = str(raw.get("time") or "")
    if not CLOCK.match(clock):
        raise Refused("a local time HH:MM, e.g. 09:30", "send_at.time")
    checked: dict[str, Any] = {"mode": "local", "time": clock}
    if raw.get("date"):
        try:
            checked["date"] = date.fromisoformat(str(raw["date"])).isoformat()
        except ValueError:
            raise Refused("a date YYYY-MM-DD", "send_at.date") from None
    return checked


def due_at(send_at: Mapping[str, Any], timezone: str | None, now: datetime) -> datetime:
    """When the participant's message is due: now, or the local time on the given date (or
    the next time their clock reads it) in their own timezone."""
    if send_at.get("mode") != "local":
        return now
    tz = zone(timezone)
    hour, minute = (int(part) for part in send_at["time"].split(":"))
    wall = time(hour, minute)
    if send_at.get("date"):
        return max(now, clock_reaches(date.fromisoformat(send_at["date"]), wall, tz))
    today = now.astimezone(tz).date()
    first = clock_reaches(today, wall, tz)
    return first if first >= now else clock_reaches(today + timedelta(days=1), wall, tz)
