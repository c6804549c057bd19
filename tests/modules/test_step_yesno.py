"""Yes/no questions (`answer: yesno`), read in the participant's words or by the number of the
listed option, typed as yes/no in conditions; and the question as the answer-reading model
and the codebook see it: partials rendered, the description preferred to the raw text."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.interventions.interpreter.questions import numbered, parse
from bot.interventions.language.format import Question
from bot.interventions.language.loader import load_intervention
from bot.reporting.codebook import questions
from bot.store.event_types.interventions import MeasurementRecorded
from tests.interventions.variants import problems, variant
from tests.modules.step_harness import Run, in_explore

WALKED = Question(title="Walked", text="Did you walk today?", answer="yesno")
IN_SPANISH = Question(title="Caminó", text="¿Caminó hoy?", answer="yesno", options=["Sí", "No"])
MOOD = 'text: "How is your mood today, from 1 (very low) to 10 (very good)?"'


@pytest.mark.parametrize(
    ("question", "reply", "value"),
    [
        (WALKED, "yes", True),
        (WALKED, "Y", True),
        (WALKED, "sim", True),
        (WALKED, "oui!", True),
        (WALKED, "si", True),
        (WALKED, "1", True),
        (WALKED, "no", False),
        (WALKED, "N", False),
        (WALKED, "non", False),
        (WALKED, "2", False),
        (WALKED, "3", None),
        (WALKED, "maybe later", None),
        (IN_SPANISH, "sí", True),
        (IN_SPANISH, "No", False),
    ],
)
def test_a_yes_no_answer_is_read_without_the_llm(
    question: Question, reply: str, value: object
) -> None:
    assert parse(question, reply) == value


def test_a_yes_no_question_is_sent_with_its_two_options_numbered() -> None:
    assert numbered(WALKED, WALKED.text) == "Did you walk today?\n1. Yes\n2. No"
    assert numbered(IN_SPANISH, IN_SPANISH.text) == "¿Caminó hoy?\n1. Sí\n2. No"


def test_a_yes_no_question_takes_two_option_words_or_none() -> None:
    with pytest.raises(ValueError, match="two: the words for yes and no"):
        Question(title="x", text="x?", answer="yesno", options=["a", "b", "c"])


def _yesno(tmp_path: Path) -> Path:
    return variant(
        tmp_path,
        "questions/mood.md",
        replace=("answer: scale\nmin: 1\nmax: 10", "answer: yesno"),
    )


def test_a_yes_no_answer_is_recorded_as_true_or_false(tmp_path: Path) -> None:
    run = in_explore(Run(_yesno(tmp_path)))
    run.later(hours=11)
    run.fire("measurement")

    run.say("sim")

    assert [(m.value, m.method) for m in run.data(MeasurementRecorded)] == [(True, "parsed")]


def test_a_yes_no_answer_is_compared_with_true_or_false(tmp_path: Path) -> None:
    folder = _yesno(tmp_path)
    good = 'when: judgements.ready.answer == "yes" and measurements.mood == true'
    variant(tmp_path, "steps/welcome.md", replace=('when: judgements.ready.answer == "yes"', good))
    assert problems(folder) == []

    variant(tmp_path, "steps/welcome.md", replace=("mood == true", 'mood == "yes"'))
    assert problems(folder) == [
        'steps/welcome.md:11: condition `judgements.ready.answer == "yes" and '
        "measurements.mood == \"yes\"`: '==' compares values of one type, but "
        '`measurements.mood` is yes/no (or none) and `"yes"` is text (write true or false, '
        "without quotes)"
    ]


def _included(tmp_path: Path) -> Path:
    variant(tmp_path, "partials/scale.md", "from 1 (very low) to 10 (very good)")
    return variant(
        tmp_path,
        "questions/mood.md",
        replace=(MOOD, "text: \"How is your mood today, {% include 'scale.md' %}?\""),
    )


def test_the_answer_reading_model_sees_the_question_with_its_partials_rendered(
    tmp_path: Path,
) -> None:
    run = in_explore(Run(_included(tmp_path)))
    run.later(hours=11)
    run.fire("measurement")
    run.llm.answers("question:mood", 8)

    run.say("pretty good today")

    prompt = run.llm.call("question:mood")["messages"][0]["content"]
    assert "asked: How is your mood today, from 1 (very low) to 10 (very good)?" in prompt
    assert "{%" not in prompt


def test_the_codebook_describes_a_question_by_its_description_not_its_template(
    tmp_path: Path,
) -> None:
    folder = _included(tmp_path)
    [without] = questions(load_intervention(folder))
    variant(
        tmp_path, "questions/mood.md", replace=("title: Mood", "title: Mood\ndescription: Mood")
    )
    [described] = questions(load_intervention(folder))

    assert without.description == ("How is your mood today, from 1 (very low) to 10 (very good)?")
    assert described.description == "Mood"
