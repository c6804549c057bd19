"""The corpus of broken interventions: the good fixture with one mistake each, every one refused
by the validator at its file and line, with a message that names the types involved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interventions.variants import problems, variant

# judgements/risk.md with two more typed fields, for the cases that need them
RISK = (
    "judgements/risk.md",
    "    options: {none: no sign of risk, low: some distress, high: talk of harming themselves}",
    "    options: {none: no sign of risk, low: some distress, high: talk of harming themselves}\n"
    "  flagged: {type: bool, description: They spoke of harming themselves}\n"
    "  severity: {type: int, min: 0, max: 3}",
)
INTERRUPT = 'when: judgements.risk.level == "high"\n  judgements'
WHEN_YES = 'when: judgements.ready.answer == "yes"'
WHEN_CONFUSED = 'when: judgements.engaged.response == "confused"'


def _interrupt(condition: str) -> tuple[str, str, str]:
    return ("steps/risk-check.md", INTERRUPT, f"when: {condition}\n  judgements")


def _welcome(condition: str) -> tuple[str, str, str]:
    return ("steps/welcome.md", WHEN_YES, f"when: {condition}")


def _goodbye(test: str) -> tuple[str, str, str]:
    return ("steps/goodbye.md", "Goodbye!", f"Goodbye {test}!")


CORPUS: dict[str, tuple[list[tuple[str, str, str]], str]] = {
    # --- types: the mistakes that used to validate and then evaluate to false
    "yes-no-compared-with-text": (
        [RISK, _interrupt('judgements.risk.flagged == "yes"')],
        "steps/risk-check.md:4: condition `judgements.risk.flagged == \"yes\"`: '==' compares "
        'values of one type, but `judgements.risk.flagged` is yes/no (or none) and `"yes"` '
        "is text (write true or false, without quotes)",
    ),
    "integer-compared-with-text": (
        [RISK, _interrupt('judgements.risk.severity >= "high"')],
        "steps/risk-check.md:4: condition `judgements.risk.severity >= \"high\"`: '>=' compares "
        "numbers, dates or times, but `judgements.risk.severity` is an integer (or none) and "
        '`"high"` is text',
    ),
    "choice-compared-with-a-value-not-among-its-options": (
        [("steps/explore.md", WHEN_CONFUSED, 'when: judgements.engaged.response == "confusd"')],
        "steps/explore.md:8: condition `judgements.engaged.response == \"confusd\"`: 'confusd' "
        "is not an option of `judgements.engaged.response`: `judgements.engaged.response` is "
        "one of 'yes', 'no', 'confused' (or none) and `\"confusd\"` is text",
    ),
    "misspelt-profile-name": (
        [_welcome("profile.strated == true")],
        "steps/welcome.md:11: condition `profile.strated == true`: no profile field 'strated'; "
        "did you mean 'started'? (declare profile fields under `profile:` in intervention.yaml)",
    ),
    "arithmetic-on-yes-no": (
        [RISK, _interrupt("judgements.risk.flagged + 1 > 1")],
        "steps/risk-check.md:4: condition `judgements.risk.flagged + 1 > 1`: '+' works on "
        "numbers, but `judgements.risk.flagged` is yes/no (or none) and `1` is an integer",
    ),
    "yes-no-ordered-like-a-number": (
        [_welcome("participant.flagged > 0")],
        "steps/welcome.md:11: condition `participant.flagged > 0`: '>' compares numbers, dates "
        "or times, but `participant.flagged` is yes/no and `0` is an integer",
    ),
    "choices-have-no-order": (
        [_interrupt('judgements.risk.level > "low"')],
        "steps/risk-check.md:4: condition `judgements.risk.level > \"low\"`: '>' compares "
        "numbers, dates or times, but `judgements.risk.level` is one of 'none', 'low', 'high' "
        '(or none) and `"low"` is text; options have no order',
    ),
    "not-of-text": (
        [_welcome("not notes.SUMMARY")],
        "steps/welcome.md:11: condition `not notes.SUMMARY`: 'not' works on yes/no values, but "
        "`notes.SUMMARY` is text (compare it with something first)",
    ),
    "and-of-an-integer": (
        [_welcome('judgements.ready.answer == "yes" and step.turns')],
        'steps/welcome.md:11: condition `judgements.ready.answer == "yes" and step.turns`: '
        "'and' works on yes/no values, but `step.turns` is an integer (compare it with "
        "something first)",
    ),
    "condition-that-is-not-yes-or-no": (
        [_welcome("profile.goal")],
        "steps/welcome.md:11: condition `profile.goal`: a condition must be yes or no, but "
        "`profile.goal` is text (or none) (compare it with something, e.g. `!= none`)",
    ),
    "step-name-that-is-no-step": (
        [_welcome('step.name == "welcom"')],
        "steps/welcome.md:11: condition `step.name == \"welcom\"`: 'welcom' is not an option of "
        "`step.name`: `step.name` is one of",
    ),
    "choices-that-share-no-option": (
        [_welcome("judgements.ready.answer == judgements.risk.level")],
        "steps/welcome.md:11: condition `judgements.ready.answer == judgements.risk.level`: '==' "
        "compares choices that share no option: `judgements.ready.answer` is one of 'yes', "
        "'no', 'unsure' (or none) and `judgements.risk.level` is one of 'none', 'low', 'high' "
        "(or none)",
    ),
    "none-check-on-a-value-that-is-never-none": (
        [_welcome("step.turns == none")],
        "steps/welcome.md:11: condition `step.turns == none`: `step.turns` is an integer and is "
        "never none",
    ),
    "list-holding-a-value-not-among-the-options": (
        [_interrupt('judgements.risk.level in ["high", "severe"]')],
        'steps/risk-check.md:4: condition `judgements.risk.level in ["high", "severe"]`: '
        "'severe' not an option of `judgements.risk.level`",
    ),
    "unary-minus-on-text": (
        [_welcome("-profile.goal < 1")],
        "steps/welcome.md:11: condition `-profile.goal < 1`: '-' works on numbers, but "
        "`profile.goal` is text (or none)",
    ),
    "scale-answer-compared-with-text": (
        [_welcome('measurements.mood == "good"')],
        "steps/welcome.md:11: condition `measurements.mood == \"good\"`: '==' compares values of "
        'one type, but `measurements.mood` is an integer (or none) and `"good"` is text',
    ),
    "item-of-a-value-that-is-not-a-list": (
        [_welcome('notes.SUMMARY[0] == "a"')],
        'steps/welcome.md:11: condition `notes.SUMMARY[0] == "a"`: `notes.SUMMARY` is text, '
        "not a list: it has no item [0]",
    ),
    "field-of-a-field": (
        [_welcome('judgements.ready.answer.text == "a"')],
        'steps/welcome.md:11: condition `judgements.ready.answer.text == "a"`: '
        "`judgements.ready.answer` is one of 'yes', 'no', 'unsure' (or none): it has no `.text`",
    ),
    "misspelt-name-under-not": (
        [_welcome("not judgements.ready.answr")],
        "steps/welcome.md:11: condition `not judgements.ready.answr`: no result field "
        "'judgements.ready.answr'; did you mean 'judgements.ready.answer'?",
    ),
    "text-index": (
        [_welcome('notes.SUMMARY[-"a"] == "b"')],
        'steps/welcome.md:11: condition `notes.SUMMARY[-"a"] == "b"`: [...] needs a fixed '
        "text key or whole number",
    ),
    "set-of-an-undeclared-profile-field": (
        [("steps/welcome.md", "set: {started: true}", "set: {strated: true}")],
        "steps/welcome.md:13: set: no profile field 'strated'; did you mean 'started'? (declare "
        "profile fields under `profile:` in intervention.yaml)",
    ),
    "set-value-of-the-wrong-type": (
        [("steps/welcome.md", "set: {started: true}", "set: {started: judgements.ready.answer}")],
        "steps/welcome.md:13: set: started: `judgements.ready.answer` (one of 'yes', 'no', "
        "'unsure' (or none)) cannot be stored in profile.started: it is yes/no (or none), and "
        "the value is one of 'yes', 'no', 'unsure' (or none)",
    ),
    "set-literal-of-the-wrong-type": (
        [("steps/welcome.md", "set: {started: true}", "set: {started: 3}")],
        "steps/welcome.md:13: set: started: `3` (an integer) cannot be stored in "
        "profile.started: it is yes/no (or none), and the value is an integer",
    ),
    "set-expression-with-an-unknown-name": (
        [
            (
                "steps/welcome.md",
                "set: {started: true}",
                "set: {started: 'judgements.redy.answer == \"yes\"'}",
            )
        ],
        "steps/welcome.md:13: set: started: no judgement 'redy'; did you mean 'ready'?",
    ),
    "send-template-with-an-unknown-variable": (
        [
            (
                "steps/welcome.md",
                "      - set: {started: true}\n",
                "      - set: {started: true}\n      - send: 'See you, {{ profile.gaol }}'\n",
            )
        ],
        "steps/welcome.md:14: template: no variable 'profile.gaol'; did you mean 'profile.goal'?",
    ),
    "misspelt-profile-name-in-a-template": (
        [("steps/goodbye.md", "Goodbye!", "Goodbye, {{ profile.gaol }}!")],
        "steps/goodbye.md:4: template: no variable 'profile.gaol'; did you mean 'profile.goal'?",
    ),
    # --- ranges: a threshold no declared value can pass, or every one passes (issue 63)
    "threshold-above-the-declared-maximum": (
        [RISK, _interrupt("judgements.risk.severity >= 30")],
        "steps/risk-check.md:4: condition `judgements.risk.severity >= 30`: "
        "`judgements.risk.severity >= 30` can never be true: `judgements.risk.severity` is "
        "0 to 3",
    ),
    "threshold-every-value-passes": (
        [RISK, _interrupt("judgements.risk.severity >= 0")],
        "steps/risk-check.md:4: condition `judgements.risk.severity >= 0`: "
        "`judgements.risk.severity >= 0` is always true: `judgements.risk.severity` is 0 to 3 "
        "(whenever `judgements.risk.severity` has a value; to ask whether it has one, write "
        "`judgements.risk.severity != none`)",
    ),
    "scale-answer-past-the-top-of-its-scale": (
        [_welcome("measurements.mood > 10")],
        "steps/welcome.md:11: condition `measurements.mood > 10`: `measurements.mood > 10` can "
        "never be true: `measurements.mood` is 1 to 10",
    ),
    "safety-rule-whose-parts-exclude-each-other": (
        [
            RISK,
            (
                "judgements/risk.md",
                '- when: judgements.risk.level == "high"',
                "- when: judgements.risk.severity > 2 and judgements.risk.severity < 2",
            ),
        ],
        "judgements/risk.md:10: condition `judgements.risk.severity > 2 and "
        "judgements.risk.severity < 2`: `judgements.risk.severity > 2 and "
        "judgements.risk.severity < 2` can never be true",
    ),
    "options-all-excluded": (
        [_welcome('judgements.ready.answer not in ["yes", "no", "unsure"]')],
        'steps/welcome.md:11: condition `judgements.ready.answer not in ["yes", "no", '
        '"unsure"]`: `judgements.ready.answer not in ["yes", "no", "unsure"]` can never be true',
    ),
    # --- templates: their tests are checked like conditions (issue 63)
    "template-compares-a-choice-with-a-value-not-among-its-options": (
        [_goodbye("{% if judgements.ready.answer == 'yess' %}friend{% endif %}")],
        "steps/goodbye.md:4: template: condition `judgements.ready.answer == 'yess'`: 'yess' is "
        "not an option of `judgements.ready.answer`",
    ),
    "template-compares-a-choice-with-its-option-number": (
        [_goodbye("{% if judgements.ready.answer == 1 %}friend{% endif %}")],
        "steps/goodbye.md:4: template: condition `judgements.ready.answer == 1`: "
        "`judgements.ready.answer` holds the option's text, not its number: write the option "
        "itself, 'yes'",
    ),
    "choice-compared-with-its-option-number": (
        [_welcome("judgements.ready.answer == 2")],
        "steps/welcome.md:11: condition `judgements.ready.answer == 2`: "
        "`judgements.ready.answer` holds the option's text, not its number: write the option "
        "itself, 'no'",
    ),
    "template-threshold-past-the-top-of-the-scale": (
        [_goodbye("{% if measurements.mood > 10 %}great{% endif %}")],
        "steps/goodbye.md:4: template: condition `measurements.mood > 10`: `measurements.mood "
        "> 10` can never be true: `measurements.mood` is 1 to 10",
    ),
    "template-in-a-prompt-compares-a-number-with-text": (
        [
            (
                "steps/explore.md",
                "{% if notes.SUMMARY %}",
                '{% if notes.SUMMARY and measurements.mood == "5" %}',
            )
        ],
        "steps/explore.md:20: template: condition `notes.SUMMARY and measurements.mood == '5'`: "
        "'==' compares values of one type, but `measurements.mood` is an integer (or none) and "
        "`'5'` is text",
    ),
    # --- authoring pitfalls: what YAML and the validation library say, in the author's words
    "unquoted-yes-and-no-options": (
        [("questions/mood.md", "answer: scale", "answer: options\noptions: [yes, no]")],
        "questions/mood.md:5: `yes`, `no` unquoted are read as true or false (YAML 1.1); "
        "quote them: 'yes', 'no'",
    ),
    "unquoted-yes-option-key": (
        [("judgements/ready.md", '"yes": they want', "yes: they want")],
        "judgements/ready.md:7: the key `yes` unquoted is read as true or false (YAML 1.1); "
        "quote it: 'yes'",
    ),
    "comma-inside-a-description-in-braces": (
        [("judgements/engaged.md", "One sentence on why.", "One sentence, on why.")],
        "judgements/engaged.md:5: in `{...}` a comma separates `key: value` pairs, so `on why.` "
        "was read as a key of its own; quote the text that holds a comma: `description: 'One "
        "sentence, on why.'`",
    ),
    "comma-missing-between-pairs-in-braces": (
        [("judgements/engaged.md", "{type: text, description", "{type: text description")],
        "judgements/engaged.md:5: a comma is missing before `description:` in `{...}` (write "
        "`key: value, description: ...`)",
    ),
    "option-key-that-is-a-number": (
        [("judgements/ready.md", "unsure: they have", "3: they have")],
        "judgements/ready.md:9: `result.answer.options`: the key `3` should be text (quote it: "
        "'3')",
    ),
    # --- judgements a condition reads but the step (or every turn) does not run
    "crisis-interrupt-on-a-judgement-never-run": (
        [("steps/risk-check.md", "judgements: [risk]", "judgements: []")],
        "steps/risk-check.md:4: the interrupt reads `judgements.risk`, but 'risk' is not run "
        "every turn nor by any step: the interrupt never fires",
    ),
    "crisis-interrupt-on-a-judgement-one-step-runs": (
        [
            ("steps/risk-check.md", "judgements: [risk]", "judgements: []"),
            ("steps/explore.md", "judgements: [engaged]", "judgements: [engaged, risk]"),
        ],
        "steps/risk-check.md:4: the interrupt reads `judgements.risk`, but 'risk' is not run "
        "every turn: this crisis interrupt misses the turn that matters",
    ),
    "transition-on-a-judgement-the-step-does-not-run": (
        [_welcome('judgements.engaged.response == "yes"')],
        "steps/welcome.md:11: warning: transition to 'explore' reads `judgements.engaged`, but "
        "step 'welcome' does not run judgement 'engaged'",
    ),
    # --- the mistakes that were caught already
    "unknown-result-field": (
        [("steps/explore.md", WHEN_CONFUSED, 'when: judgements.engaged.respnse == "confused"')],
        'steps/explore.md:8: condition `judgements.engaged.respnse == "confused"`: no result '
        "field 'judgements.engaged.respnse'; did you mean 'judgements.engaged.response'?",
    ),
    "unknown-judgement": (
        [("steps/explore.md", "judgements: [engaged]", "judgements: [engagd]")],
        "steps/explore.md:4: no judgement 'engagd'; did you mean 'engaged'?",
    ),
    "unknown-step": (
        [("steps/explore.md", "to: goodbye", "to: goodby")],
        "steps/explore.md:9: no step 'goodby'; did you mean 'goodbye'?",
    ),
    "unknown-root": (
        [("intervention.yaml", "root: welcome", "root: welcom")],
        "intervention.yaml:5: no step 'welcom'; did you mean 'welcome'?",
    ),
    "call-in-a-condition": (
        [_welcome("__import__('os') == 1")],
        "steps/welcome.md:11: condition `__import__('os') == 1`: calls are not allowed",
    ),
    "is-in-a-condition": (
        [_welcome("profile.goal is none")],
        "steps/welcome.md:11: condition `profile.goal is none`: 'is' is not allowed, use == or "
        "!= instead",
    ),
    "unknown-key": (
        [("steps/explore.md", "max_turns: 6", "max_turn: 6")],
        "steps/explore.md:14: unknown key `max_turn`",
    ),
    "invalid-yaml": (
        [("steps/goodbye.md", "end: true", "end: [true")],
        "steps/goodbye.md:",
    ),
    "template-syntax": (
        [("steps/goodbye.md", "Goodbye!", "Goodbye {% if %}!")],
        "steps/goodbye.md:4: template syntax:",
    ),
    "unknown-question-kind-key": (
        [("questions/mood.md", "answer: scale", "answer: slider")],
        "questions/mood.md:4: `answer`: Input should be 'text', 'options', 'scale' or 'yesno'",
    ),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_each_broken_intervention_is_refused_at_its_file_and_line(
    tmp_path: Path, case: str
) -> None:
    edits, expected = CORPUS[case]
    folder = tmp_path / "good"
    for file, old, new in edits:
        folder = variant(tmp_path, file, replace=(old, new))

    found = problems(folder)

    assert len(found) == 1, found
    assert found[0].startswith(expected), found[0]


def test_the_corpus_holds_at_least_25_mistakes() -> None:
    assert len(CORPUS) >= 25


def test_malformed_files_are_problems_and_every_file_is_still_checked(tmp_path: Path) -> None:
    folder = variant(tmp_path, "intervention.yaml", "title: [unclosed\n")
    (folder / "steps" / "binary.md").write_bytes(b"---\ntitle: x\n---\n\xff\xfe")
    (folder / "steps" / "listed.md").write_text("---\n- a\n- b\n---\nHello")
    (folder / "steps" / "folder.md").mkdir()
    variant(tmp_path, "steps/explore.md", replace=(WHEN_CONFUSED, 'when: step.turns == "2"'))

    assert problems(folder) == [
        "intervention.yaml:2: invalid YAML: expected ',' or ']', but got '<stream end>'",
        "steps/binary.md:4: not UTF-8 text (save the file as UTF-8)",
        "steps/explore.md:8: condition `step.turns == \"2\"`: '==' compares values of one "
        'type, but `step.turns` is an integer and `"2"` is text',
        "steps/listed.md:1: expected `key: value` lines",
    ]
