"""Fail loud at run time: a condition or template that goes wrong when a participant meets it
is recorded where it is written (`condition.failed`/`template.failed`), raises an operator
alert, and the participant gets the intervention's fallback; it is never silently false."""

from __future__ import annotations

from pathlib import Path

from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import ConditionFailed, StepEntered, TemplateFailed
from tests.interventions.variants import variant
from tests.modules.step_harness import Run

FALLBACK = "Sorry, something went wrong on our side. We'll be in touch."


def test_a_condition_on_an_answer_not_given_yet_fails_loudly_and_sends_the_fallback(
    tmp_path: Path,
) -> None:
    folder = variant(
        tmp_path,
        "steps/welcome.md",
        replace=('when: judgements.ready.answer == "yes"', "when: measurements.mood <= 3"),
    )
    run = Run(folder)
    run.start()
    run.llm.judges("risk", level="none")
    run.llm.judges("ready", answer="yes")

    reply = run.say("yes")

    assert reply == FALLBACK
    assert run.data(ConditionFailed) == [
        ConditionFailed(
            condition="measurements.mood <= 3",
            error="'<=' not supported between instances of 'NoneType' and 'int'",
            file=str(folder / "steps" / "welcome.md"),
            line=11,
            step="welcome",
        )
    ]
    (alert,) = [a for a in run.data(AlertRaised) if a.kind == "condition"]
    assert alert.severity == "critical"
    assert "steps/welcome.md:11: condition `measurements.mood <= 3`" in alert.summary
    assert run.step == "welcome"


def test_a_template_that_fails_at_run_time_is_recorded_at_its_line_and_never_sent(
    tmp_path: Path,
) -> None:
    folder = variant(
        tmp_path,
        "steps/welcome.md",
        replace=("Hi {{ participant.name or 'there' }}!", "Hi {{ notes.SUMMARY[10] }}!"),
    )
    run = Run(folder)

    reply = run.start()

    assert reply == FALLBACK
    (failed,) = run.data(TemplateFailed)
    assert (failed.template, failed.file, failed.line) == (
        "step:welcome:say:0",
        str(folder / "steps" / "welcome.md"),
        4,
    )
    assert [a.kind for a in run.data(AlertRaised)] == ["template"]
    assert [e.step for e in run.data(StepEntered)] == ["welcome"]
