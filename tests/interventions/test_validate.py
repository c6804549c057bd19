"""The validator: the good fixture has no problem; each kind of mistake is caught, with the
file, the line, and a message an author can act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interventions.variants import FIXTURES, GOOD, problems, variant


def test_the_good_fixture_has_no_problem() -> None:
    assert problems(GOOD) == []


BROKEN = [
    # a template syntax error, at its line in the file
    "steps/start.md:11: template syntax: Expected an expression, got 'end of statement block'",
    # an unknown variable, with the name it probably meant
    "steps/middle.md:4: template: no variable 'participant.nmae'; did you mean 'participant.name'?",
    # an unsafe condition
    "steps/start.md:8: condition `().__class__`: names starting with '_' are not allowed: "
    "'__class__' at column 1",
    # an unknown step
    "steps/start.md:5: no step 'finsh'; did you mean 'finish'?",
    # a dead end, and steps nothing leads to
    "steps/middle.md:2: dead end: step 'middle' has no transitions (or `end: true`)",
    "steps/orphan.md:2: step 'orphan' cannot be reached from the root step 'start'",
    "steps/finish.md:2: step 'finish' cannot be reached from the root step 'start'",
    # a duplicate title (titles are compared ignoring case)
    "steps/start.md:2: the title 'Start' is also used by steps/middle.md",
    # a judgement without a result type
    "judgements/vague.md:2: a judgement needs `result:`: the fields it returns, typed",
]


def test_the_broken_fixture_reports_every_mistake_and_nothing_else() -> None:
    folder = FIXTURES / "broken"

    assert sorted(problems(folder)) == sorted(BROKEN)


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        (
            "steps/explore.md",
            'when: judgements.engaged.response == "confused"',
            'when: judgements.engaged.respnse == "confused"',
            'steps/explore.md:8: condition `judgements.engaged.respnse == "confused"`: no '
            "result field 'judgements.engaged.respnse'; did you mean "
            "'judgements.engaged.response'?",
        ),
        (
            "steps/explore.md",
            "step.turns > 2",
            "step.turns > 2 and __import__('os')",
            'steps/explore.md:10: condition `judgements.engaged.response == "yes" and '
            "step.turns > 2 and __import__('os')`: calls are not allowed: '__import__(...)' "
            "at column 61",
        ),
        (
            "steps/explore.md",
            "tools: [save_user_profile]",
            "tools: [save_profile]",
            "steps/explore.md:3: no tool 'save_profile'; did you mean 'save_user_profile'?",
        ),
        (
            "steps/explore.md",
            '{% include "style.md" %}',
            '{% include "styles.md" %}',
            "steps/explore.md:16: no partial named 'styles.md' (partials/ here, or "
            "prompts/partials/)",
        ),
        (
            "steps/explore.md",
            "Now write your message. [[reply]]",
            "Now write your message. [[think:reply]]",
            "steps/explore.md:15: nothing to send: end the prompt with a [[reply]] slot",
        ),
        (
            "steps/explore.md",
            "[[think:plan]]",
            "[[ponder:plan]]",
            "steps/explore.md:24: [[ponder:plan]]: unknown slot kind 'ponder'; known: speak, "
            "think, pick, bool, int",
        ),
        (
            "steps/goodbye.md",
            'say: "Thank you',
            'say: "[[reply]] Thank you',
            "steps/goodbye.md:4: fixed text and judgement or question prompts take no [[slots]]",
        ),
        (
            "judgements/engaged.md",
            "model: fast",
            "model: fastest",
            "judgements/engaged.md:3: no model alias 'fastest'; did you mean 'fast'?",
        ),
        (
            "judgements/engaged.md",
            'options: {"yes": engaged, "no": not engaged, confused: does not understand the task}',
            "options: {}",
            "judgements/engaged.md:6: `result.response`: a choice needs `options` (each value "
            "with its meaning)",
        ),
        (
            "partials/style.md",
            "{{ participant.name or 'the client' }}",
            "{{ participant.first_name }}",
            "partials/style.md:1: template: no variable 'participant.first_name'; did you mean "
            "'participant.name'?",
        ),
        (
            "steps/welcome.md",
            "  - schedule: mood",
            "  - schedule: moood",
            "steps/welcome.md:8: no question 'moood'; did you mean 'mood'?",
        ),
        (
            "intervention.yaml",
            'supervisors: ["+15005550100"]',
            'supervisors: ["555"]',
            "intervention.yaml:14: supervisor phone: ",
        ),
    ],
    ids=[
        "unknown-judgement-field",
        "call-in-condition",
        "unknown-tool",
        "unknown-partial",
        "no-speakable-slot",
        "unknown-slot-kind",
        "slot-in-fixed-text",
        "unknown-model-alias",
        "choice-without-options",
        "unknown-name-in-partial",
        "unknown-question",
        "bad-supervisor-phone",
    ],
)
def test_a_single_mistake_is_reported_where_it_is(
    tmp_path: Path, file: str, old: str, new: str, expected: str
) -> None:
    found = problems(variant(tmp_path, file, replace=(old, new)))

    assert len(found) == 1, found
    assert found[0].startswith(expected)


def test_a_transition_after_an_unconditional_one_is_reported(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/explore.md",
        replace=('    when: judgements.engaged.response == "confused"\n', ""),
    )

    assert problems(folder) == [
        "steps/explore.md:7: a transition without `when` always fires: later ones never"
    ]


def test_a_file_that_does_not_load_causes_no_cascade_of_unknown_references(
    tmp_path: Path,
) -> None:
    folder = variant(tmp_path, "judgements/ready.md", replace=("title:", "titel:"))

    assert problems(folder) == [
        "judgements/ready.md:2: `title` is required",
        "judgements/ready.md:2: unknown key `titel`",
    ]


CHECKIN = """---
title: Check-in
say: "Time for a check-in."
transitions:
  - to: goodbye
---
"""
CHECK_IN_POINT = """---
description: The check-in or nothing, at 10:00.
when:
  times: ["10:00"]
options:
  - name: nothing
    probability: 0.5
  - name: checkin
    start: checkin
    probability: 0.5
outcome:
  reply: yes/no
  within: 60m
---
"""


def test_a_step_that_only_a_decision_option_starts_is_reached(tmp_path: Path) -> None:
    folder = variant(tmp_path, "steps/checkin.md", CHECKIN)
    assert problems(folder) == [
        "steps/checkin.md:2: step 'checkin' cannot be reached from the root step 'welcome'"
    ]

    variant(tmp_path, "decisions/check_in.md", CHECK_IN_POINT)

    assert problems(folder) == []
