"""Decision files: a good one passes, and each broken one is refused at its file:line."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.interventions.language.loader import load_intervention
from bot.interventions.validation.decisions_check import (
    decision_problems,
    intervention_type_of,
    read_decision,
)

FILE = "interventions/walk/decisions/walk_nudge.md"
GOOD = """---
description: A nudge to walk, a plan, or nothing, in two windows a day.
when:
  windows: ["08:00-12:00", "14:00-20:00"]
  per_day: 1
available: step.turns > 2
options:
  - name: nudge
    send: walk_nudge
    probability: 0.4
  - name: plan
    start: plan_walk
    probability: 0.3
  - name: nothing
    probability: 0.3
outcome:
  ask: walked
  after: 2h
  window: 4h
moderators:
  hour:
    type: int
    value: participant.hour
---
Why this decision exists, for the researchers.
"""
KINDS = {
    "step.turns > 2": "yes/no",
    "step.turns": "integer",
    "participant.hour": "integer",
    "participant.name": "text",
    "0.2 + profile.boost": "number",
}
MARK = "  # <-"


def type_of(expression: str) -> str:
    """A stand-in for the intervention's type checker."""
    if expression not in KINDS:
        raise ValueError(f"unknown name in `{expression}`")
    return KINDS[expression]


# (what is broken, text replaced in GOOD, its replacement marked at the expected line, phrase)
BROKEN = [
    ("sum of 1.2", "probability: 0.3\n  - name: nothing", "probability: 0.5\n  - name: nothing",
     "sum to 1.2"),
    ("option with p = 0", "    probability: 0.4", "    probability: 0" + MARK,
     "is 0, outside the bounds 0.1-0.9"),
    ("window shorter than the question's delay", "  window: 4h", "  window: 90m" + MARK,
     "window (90m) must be longer than the question's delay (after 2h)"),
    ("untyped moderator", "  hour:\n    type: int\n    value: participant.hour",
     "  hour: participant.hour" + MARK, "moderator `hour` has no type"),
    ("availability not yes/no", "available: step.turns > 2", "available: step.turns" + MARK,
     "`available` must be yes or no, but `step.turns` is integer"),
    ("unknown option action", "    start: plan_walk", "    email: plan_walk" + MARK,
     "unknown key `email`: an option does `send:` a template, `start:` a step, or nothing"),
    ("bounds outside (0, 1)", "outcome:", "bounds: [0, 1.2]" + MARK + "\noutcome:",
     "`bounds` must be 0 < low < high < 1"),
    ("a time that is not HH:MM", '  windows: ["08:00-12:00", "14:00-20:00"]\n  per_day: 1',
     '  times: ["09:00", "9am"]' + MARK, "'9am' is not a time such as 09:00"),
    ("overlapping windows", '  windows: ["08:00-12:00", "14:00-20:00"]',
     '  windows: ["08:00-12:00", "11:00-20:00"]' + MARK, "the windows overlap"),
    ("no decision a day", "  per_day: 1", "  per_day: 0" + MARK, "`per_day` is at least 1"),
    ("two kinds of when", "when:\n", "when:" + MARK + "\n  on: message.received\n",
     "`when:` takes exactly one of `times:`, `windows:` or `on:`"),
    ("an option both sends and starts", "  - name: nudge\n", "  - name: nudge" + MARK +
     "\n    start: intro\n", "an option does one thing"),
    ("an option name used twice", "  - name: plan", "  - name: nudge" + MARK, "used twice"),
    ("a reply without its window", "  ask: walked\n  after: 2h\n  window: 4h",
     "  reply: yes/no" + MARK, "`reply` needs `within:`"),
    ("a probability expression that is not a number", "    probability: 0.4",
     "    probability: participant.name" + MARK,
     "the probability of `nudge` must be a number, but `participant.name` is text"),
    ("a moderator whose value is not its type", "    type: int", "    type: bool",
     "moderator `hour` (bool) must be yes or no, but `participant.hour` is integer"),
    ("a single option", "  - name: plan\n    start: plan_walk\n    probability: 0.3\n"
     "  - name: nothing\n    probability: 0.3\n", "", "at least 2 items"),
    ("an unknown key", "outcome:", "reward: 1" + MARK + "\noutcome:", "unknown key `reward`"),
    ("expressions that cannot make the sum 1", "0.4\n  - name: plan\n    start: plan_walk\n"
     "    probability: 0.3", "0.2 + profile.boost\n  - name: plan\n    start: plan_walk\n"
     "    probability: 0.65", "cannot sum to 1"),
    ("a yes as a probability", "    probability: 0.4", "    probability: yes" + MARK,
     "a probability is a number"),
    ("a step without step.entered", "  per_day: 1", "  per_day: 1\n  step: intro" + MARK,
     "`step` goes with `on: step.entered` only"),
    ("a key of another outcome", "  after: 2h", "  after: 2h\n  within: 1h" + MARK,
     "`within` does not go with `ask`"),
]  # fmt: skip


# Where a problem goes when no line of the replacement is marked: the first line starting so.
UNMARKED = {
    "sum of 1.2": "options:",
    "a single option": "options:",
    "expressions that cannot make the sum 1": "options:",
    "a moderator whose value is not its type": "value:",
}


def expected_line(text: str, broken: str) -> int:
    lines = [line.strip() for line in text.splitlines()]
    marked = [n for n, line in enumerate(lines, 1) if line.endswith(MARK.strip())]
    if marked:
        return marked[0]
    return next(n for n, line in enumerate(lines, 1) if line.startswith(UNMARKED[broken]))


@pytest.mark.parametrize(("broken", "old", "new", "phrase"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_decision_file_is_refused_at_its_line(
    broken: str, old: str, new: str, phrase: str
) -> None:
    assert old in GOOD, broken
    text = GOOD.replace(old, new, 1)
    problems = decision_problems(FILE, text, type_of)
    line = expected_line(text, broken)
    found = [p for p in problems if phrase in p.message and p.line == line]
    assert found, (line, problems)
    assert all(p.level == "error" and str(p).startswith(f"{FILE}:{line}: ") for p in found)


def test_the_good_decision_file_has_no_problem() -> None:
    assert decision_problems(FILE, GOOD, type_of) == []


def test_the_table_holds_a_dozen_broken_files_with_distinct_phrases() -> None:
    assert len({phrase for *_, phrase in BROKEN}) >= 12


def test_a_problem_says_file_and_line_as_authors_read_it() -> None:
    text = GOOD.replace("    probability: 0.4", "    probability: 0")
    problem = next(p for p in decision_problems(FILE, text) if "outside" in p.message)
    assert str(problem).startswith(f"{FILE}:{text.splitlines().index('    probability: 0') + 1}: ")


def test_unreadable_yaml_is_a_problem_at_its_line() -> None:
    text = GOOD.replace("  per_day: 1", "  per_day: [1")
    (problem,) = decision_problems(FILE, text)
    assert problem.message.startswith("invalid YAML") and problem.line is not None


def test_the_good_file_reads_as_typed_values() -> None:
    decision, _, problems = read_decision(FILE, GOOD)
    assert problems == [] and decision is not None
    assert decision.probabilities() == {"nudge": 0.4, "plan": 0.3, "nothing": 0.3}
    assert decision.when.window_minutes() == [(8 * 60, 12 * 60), (14 * 60, 20 * 60)]
    assert decision.outcome.after == timedelta(hours=2) and decision.outcome.kind() is None
    assert decision.bounds == (0.1, 0.9)
    assert [o.send or o.start for o in decision.options] == ["walk_nudge", "plan_walk", None]


def test_a_probability_expression_defers_the_sum_to_run_time() -> None:
    text = GOOD.replace("    probability: 0.3\n  - name: nothing", "    probability: "
                        "0.2 + profile.boost\n  - name: nothing")  # fmt: skip
    decision, _, problems = read_decision(FILE, text)
    assert problems == [] and decision is not None and decision.probabilities() is None


def test_a_reply_outcome_is_yes_or_no_and_its_latency_a_number() -> None:
    for reply, kind in (("yes/no", "yes/no"), ("latency", "number")):
        text = GOOD.replace("  ask: walked\n  after: 2h\n  window: 4h",
                            f"  reply: {reply}\n  within: 60m")  # fmt: skip
        decision, _, problems = read_decision(FILE, text)
        assert problems == [] and decision is not None and decision.outcome.kind() == kind


def test_the_interventions_type_checker_plugs_in_as_type_of() -> None:
    type_of = intervention_type_of(load_intervention("tests/interventions/fixtures/good"))
    assert (type_of("step.turns > 2"), type_of("step.turns + 1")) == ("yes/no", "integer")
    assert decision_problems(FILE, GOOD, type_of) == []
    broken = GOOD.replace("available: step.turns > 2", "available: step.turns")
    assert any("must be yes or no" in p.message for p in decision_problems(FILE, broken, type_of))


@pytest.mark.parametrize("expression", ["nothing.here > 1", "step.turns * 2", "step.turns >"])
def test_the_type_checker_refuses_what_the_condition_language_refuses(expression: str) -> None:
    type_of = intervention_type_of(load_intervention("tests/interventions/fixtures/good"))
    with pytest.raises(ValueError):
        type_of(expression)


FIXED = GOOD.replace('  windows: ["08:00-12:00", "14:00-20:00"]\n  per_day: 1',
                     '  times: ["09:00", "10:45", "18:00"]')  # fmt: skip


def test_fixed_times_that_ask_the_next_question_within_a_window_are_warned_at_the_window() -> None:
    """Points 1h45 apart, the question 2h after each, answered until 4h: the next point's
    question goes out while the last still waits (a warning: it runs)."""
    problems = decision_problems(FILE, FIXED, type_of)
    (warning,) = problems
    line = FIXED.splitlines().index("  window: 4h") + 1
    assert (warning.level, warning.line) == ("warning", line)
    assert "points 105m apart ask the next point's question" in warning.message
    assert "a window of at most 225m" in warning.message


def test_fixed_times_whose_windows_close_before_the_next_question_are_not_warned() -> None:
    for window in ("225m", "3h"):
        text = FIXED.replace("  window: 4h", f"  window: {window}")
        assert decision_problems(FILE, text, type_of) == [], window


def test_the_gap_across_midnight_counts_too() -> None:
    text = FIXED.replace('["09:00", "10:45", "18:00"]', '["08:00", "23:00"]')
    assert decision_problems(FILE, text.replace("window: 4h", "window: 11h"), type_of) == []
    (warning,) = decision_problems(FILE, text.replace("window: 4h", "window: 690m"), type_of)
    assert "points 9h apart" in warning.message
