"""Reading a decision file's front matter into a `Decision`, with the problems of its shape
and structure (times, windows, options, probabilities and their bounds, outcome, moderators)
at file:line. The loader reads `decisions/<name>.md` with it; the types of its expressions are
checked by bot.interventions.validation.decisions_check, which needs the interpreter."""

from __future__ import annotations

import math
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.interventions.language.decisions_format import (
    NAME,
    SUM_TOLERANCE,
    TIME,
    WINDOW,
    Decision,
)
from bot.interventions.language.intervention import Source
from bot.interventions.language.problems import Level, Problem

_OUTCOME_KEYS = {
    "reply": ("within",),
    "ask": ("after", "window"),
    "judge": ("window", "field"),
    "count": ("window",),
}


def decision_from(
    path: str, meta: dict[str, Any], source: Source
) -> tuple[Decision | None, list[Problem]]:
    """The decision in parsed front matter `meta` (None if it cannot be read as one) and the
    problems of its shape and structure, at the lines `source` knows."""
    problems = Problems(source)
    if not NAME.match(Path(path).stem):
        problems.add((), "the file name must use a-z, 0-9 and _ (it names the decision)")
    if not meta:
        problems.problems.append(Problem(path, 1, "a decision file opens with YAML front matter"))
        return None, problems.problems
    when = meta.get("when")
    if isinstance(when, dict) and True in when:  # YAML 1.1 reads the key `on` as true
        meta = {**meta, "when": {("on" if k is True else k): v for k, v in when.items()}}
    decision = problems.validated(_typed_moderators(meta, problems))
    if decision is not None:
        _check_when(decision, problems)
        _check_options(decision, problems)
        _check_outcome(decision, problems)
        for name in decision.moderators:
            if not NAME.match(name):
                problems.add(("moderators", name), f"moderator {name!r} must use a-z, 0-9, _")
    return decision, problems.problems


class Problems:
    """Problems of one decision file, each at the line of its key path."""

    def __init__(self, source: Source) -> None:
        self.source, self.problems = source, list[Problem]()

    def add(self, path: tuple[Any, ...], message: str, level: Level = "error") -> None:
        line = self.source.line(*path) if path else 1
        self.problems.append(Problem(self.source.file, line, message, level))

    def validated(self, meta: dict[str, Any]) -> Decision | None:
        try:
            return Decision.model_validate(meta)
        except ValidationError as exc:
            for error in exc.errors(include_url=False, include_input=False):
                loc = tuple(error["loc"])
                where = ".".join(str(part) for part in loc)
                message = error["msg"].removeprefix("Value error, ")
                if error["type"] == "extra_forbidden" and loc[:1] == ("options",):
                    message = (f"unknown key `{loc[-1]}`: an option does `send:` a template, "
                               "`start:` a step, or nothing")  # fmt: skip
                elif error["type"] == "extra_forbidden":
                    message = f"unknown key `{where}`"
                elif error["type"] == "missing":
                    message = f"`{where}` is required"
                elif where:
                    message = f"`{where}`: {message}"
                self.add(loc, message)
            return None


def _typed_moderators(meta: dict[str, Any], problems: Problems) -> dict[str, Any]:
    """The front matter without moderators that declare no type (each one a problem)."""
    moderators = meta.get("moderators")
    if not isinstance(moderators, dict):
        return meta
    kept = {}
    for name, spec in moderators.items():
        if isinstance(spec, dict) and "type" in spec:
            kept[name] = spec
        else:
            message = f"moderator `{name}` has no type: give `type:` (bool, int or number)"
            problems.add(("moderators", name), message + " and `value:` (an expression)")
    return {**meta, "moderators": kept}


def _check_when(decision: Decision, problems: Problems) -> None:
    when = decision.when
    given = [key for key in ("times", "windows", "on") if getattr(when, key) is not None]
    if len(given) != 1:
        problems.add(("when",), "`when:` takes exactly one of `times:`, `windows:` or `on:`")
    for i, time in enumerate(when.times or ()):
        if not TIME.match(time):
            problems.add(("when", "times", i), f"{time!r} is not a time such as 09:00")
        elif when.times and when.times.index(time) < i:
            problems.add(("when", "times", i), f"{time} is given twice")
    if when.times == [] or when.windows == []:
        problems.add(("when",), "give at least one time or window")
    for i, window in enumerate(when.windows or ()):
        match = WINDOW.match(window)
        if not (match and TIME.match(match[1]) and TIME.match(match[2])):
            problems.add(("when", "windows", i), f"{window!r} is not a window such as 08:00-12:00")
        elif match[1] >= match[2]:
            problems.add(("when", "windows", i), f"the window {window} ends before it starts")
    spans = sorted((start, end, i) for i, (start, end) in enumerate(when.window_minutes()))
    for (_, end, _), (start, _, i) in zip(spans, spans[1:], strict=False):
        if start < end:
            problems.add(("when", "windows", i), "the windows overlap: they must not")
    if when.per_day is not None and when.windows is None:
        problems.add(("when", "per_day"), "`per_day` goes with `windows:` only")
    elif when.per_day is not None and when.per_day < 1:
        problems.add(("when", "per_day"), f"`per_day` is at least 1, not {when.per_day}")
    if when.step is not None and when.on != "step.entered":
        problems.add(("when", "step"), "`step` goes with `on: step.entered` only")


def _check_options(decision: Decision, problems: Problems) -> None:
    low, high = decision.bounds
    bounded = 0 < low < high < 1
    if not bounded:
        problems.add(("bounds",), f"`bounds` must be 0 < low < high < 1, not [{low:g}, {high:g}]")
    seen: set[str] = set()
    for i, option in enumerate(decision.options):
        if not NAME.match(option.name):
            problems.add(("options", i, "name"), f"option {option.name!r} must use a-z, 0-9, _")
        if option.name in seen:
            problems.add(("options", i, "name"), f"the option name {option.name!r} is used twice")
        seen.add(option.name)
        if option.send is not None and option.start is not None:
            problems.add(("options", i), "an option does one thing: `send:` or `start:`, not both")
        p = option.constant
        if p is None and not str(option.probability).strip():
            problems.add(("options", i, "probability"), "the probability is empty")
        elif p is not None and bounded and not (low <= p <= high and math.isfinite(p)):
            message = f"the probability of `{option.name}` is {p:g}, outside the bounds"
            problems.add(("options", i, "probability"), f"{message} {low:g}-{high:g}")
    constants = [o.constant for o in decision.options if o.constant is not None]
    total, free = math.fsum(constants), len(decision.options) - len(constants)
    if not free and abs(total - 1) > SUM_TOLERANCE:
        problems.add(("options",), f"the probabilities sum to {total:.10g}, not 1")
    elif free and bounded and not (total + free * low <= 1 <= total + free * high):
        message = f"the fixed probabilities sum to {total:g}: with {free} expression(s) held"
        problems.add(("options",), f"{message} within {low:g}-{high:g}, they cannot sum to 1")


def _check_outcome(decision: Decision, problems: Problems) -> None:
    outcome = decision.outcome
    measure = outcome.measure
    if measure is None:
        message = "`outcome:` takes exactly one of `reply:`, `ask:`, `judge:` or `count:`"
        problems.add(("outcome",), message)
        return
    for key in ("within", "after", "window", "field"):
        if getattr(outcome, key) is not None and key not in _OUTCOME_KEYS[measure]:
            problems.add(("outcome", key), f"`{key}` does not go with `{measure}`")
    needed = "within" if measure == "reply" else "window"
    if getattr(outcome, needed) is None:
        problems.add(("outcome", measure), f"`{measure}` needs `{needed}:` (a time such as 2h)")
    for key in ("within", "after", "window"):
        value = getattr(outcome, key)
        if value is not None and value <= timedelta(0) and key != "after":  # ask at once: 0
            problems.add(("outcome", key), f"`{key}` must be longer than 0")
    if measure == "ask" and outcome.window is not None and outcome.after is not None:
        if outcome.window <= outcome.after:
            message = f"the outcome window ({_said(outcome.window)}) must be longer than the"
            problems.add(("outcome", "window"),
                         f"{message} question's delay (after {_said(outcome.after)})")  # fmt: skip
            return
    if measure == "ask" and outcome.window is not None:
        _check_questions_apart(decision, outcome.window, outcome.after or timedelta(), problems)


def _check_questions_apart(
    decision: Decision, window: timedelta, after: timedelta, problems: Problems
) -> None:
    """A warning when fixed times bring the next point's question while this point's still
    waits for its answer: a reply answers the question last asked, so the earlier one, if
    not yet answered, is then missing (docs/decisions.md, "Whose answer is it"). Random times
    in windows can come close by chance, which the docs say; fixed ones do it every day."""
    minutes = sorted(
        int(t[:2]) * 60 + int(t[3:]) for t in decision.when.times or () if TIME.match(t)
    )
    if len(minutes) < 2:
        return
    gaps = [b - a for a, b in zip(minutes, minutes[1:], strict=False)]
    gap = timedelta(minutes=min([*gaps, 24 * 60 - minutes[-1] + minutes[0]]))
    if window - after <= gap:
        return
    message = (
        f"points {_said(gap)} apart ask the next point's question while this one's still "
        f"waits for its answer (until {_said(window)} after its point): a reply answers the "
        "question last asked, so an earlier question not yet answered is missing; a window "
        f"of at most {_said(gap + after)} keeps each point's question to itself"
    )
    problems.add(("outcome", "window"), message, "warning")


def _said(duration: timedelta) -> str:
    minutes = duration.total_seconds() / 60
    return f"{minutes / 60:g}h" if minutes >= 60 and minutes % 60 == 0 else f"{minutes:g}m"
