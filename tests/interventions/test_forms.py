"""Forms in the step module: one extraction per message, validated against the fields; values
build up (several from one message), invalid parts are rejected with the reason and shown to
the model next time, the completion rule completes the form, and an `after_reply` transition
switches on the message after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.store.event_types.forms import (
    FormCompleted,
    FormExtracted,
    FormRejected,
    FormValueSet,
)
from bot.store.event_types.interventions import StepEntered
from tests.modules.step_harness import Run

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"


def extraction(values: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    found = [{"key": key, "value": value} for key, value in (values or {}).items()]
    return {"analysis": "read", "values": found, **more}


def ot() -> Run:
    run = Run(SHIPPED / "ot-mentor")
    run.llm.says("step:intake:reply", "Tell me more.")
    run.llm.says("step:mentoring:reply", "What do you notice?")
    run.start()
    return run


def test_one_message_sets_several_fields_each_with_the_message_it_came_from() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction(
        {"therapist_role": "OT student", "patient_age": 72, "diagnosis": "stroke"}
    )
    run.say("I'm an OT student; my patient is 72 and had a stroke.")

    set_ = run.data(FormValueSet)
    assert [(v.key, v.value) for v in set_] == [
        ("therapist_role", "OT student"),
        ("patient_age", 72),
        ("diagnosis", "stroke"),
    ]
    received = [e for e in run.events if e.event_type == "message.received"][-1]
    assert {v.message_id for v in set_} == {received.event_id}
    assert run.row["forms"]["situation"]["values"]["patient_age"] == 72
    assert run.row["forms"]["situation"]["sources"]["diagnosis"]["message_seq"] == received.seq


def test_a_value_of_the_wrong_type_an_unknown_field_or_option_is_rejected_not_stored() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction(
        {"patient_age": "seventy", "hobby": "golf", "marital_status": "engaged", "diagnosis": 3}
    )
    run.say("She's seventy, engaged, plays golf.")

    assert run.data(FormValueSet) == []
    reasons = {r.key: r.reason for r in run.data(FormRejected)}
    assert set(reasons) == {"patient_age", "hobby", "marital_status", "diagnosis"}
    assert "is not an integer" in reasons["patient_age"]
    assert "no field 'hobby'" in reasons["hobby"]
    assert "'engaged' is not one of" in reasons["marital_status"]
    assert run.row["forms"]["situation"]["values"] == {}

    run.llm.results["form:situation"] = extraction({"patient_age": 70})
    run.say("Sorry, she is 70.")
    prompt = run.llm.call("form:situation")["messages"][0]["content"]
    assert "rejected and not stored" in prompt and "hobby" in prompt
    assert run.row["forms"]["situation"]["rejected"] == []


def test_a_later_message_corrects_a_value() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction({"patient_age": 72})
    run.say("She is 72.")
    run.llm.results["form:situation"] = extraction({"patient_age": 73})
    run.say("Actually 73.")

    last = run.data(FormValueSet)[-1]
    assert (last.value, last.previous) == (73, 72)
    assert run.row["forms"]["situation"]["values"]["patient_age"] == 73


CRITICAL = {
    "therapist_role": "OT student",
    "patient_age": 72,
    "diagnosis": "stroke",
    "cultural_background": "Moroccan, Muslim",
    "marital_status": "widowed",
}
SIX_OTHERS = {
    "setting": "rehabilitation",
    "living_situation": "alone in a flat",
    "patient_occupation": "seamstress",
    "main_difficulty": "she refuses help",
    "patient_goals": "go home",
    "family_support": "a daughter",
}


def test_the_form_completes_by_its_rule_and_the_switch_comes_after_the_reply() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction({**CRITICAL, **SIX_OTHERS})
    run.say("All of it at once.")
    assert run.data(FormCompleted) == [] and run.step == "intake"  # 5 critical + 6 others

    run.llm.results["form:situation"] = extraction({"student_feeling": "nervous"})
    reply = run.say("I feel nervous.")
    (completed,) = run.data(FormCompleted)
    assert completed.by == "rule" and completed.values["form.others_known"] == 7
    assert reply == "Tell me more." and run.step == "mentoring"  # intake answered, then moved
    entered = run.data(StepEntered)[-1]
    assert entered.step == "mentoring" and entered.condition == "forms.situation.complete"

    assert run.say("What should I do?") == "What do you notice?"
    assert len(run.data(FormExtracted)) == 2  # mentoring fills no form


def test_without_the_critical_fields_many_others_do_not_complete_it() -> None:
    run = ot()
    others = {**SIX_OTHERS, "student_feeling": "ok", "daily_routine": "x", "years_experience": 1}
    run.llm.results["form:situation"] = extraction({**others, "diagnosis": "stroke"})
    run.say("Lots but not all.")
    assert run.data(FormCompleted) == [] and run.step == "intake"
