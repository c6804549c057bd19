"""Forms in the step module: one extraction per message, validated against the fields; values
build up (several from one message), invalid parts are rejected with the reason and shown to
the model next time, the completion rule completes the form, and an `after_reply` transition
switches on the message after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.store.event_types.forms import (
    FormCompleted,
    FormDomainCompleted,
    FormExtracted,
    FormFieldAdded,
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


def intake() -> Run:
    run = Run(SHIPPED / "health-intake")
    run.llm.says("step:interview:reply", "Next question?")
    run.llm.judges("red_flag", reason="fine", present=False)
    run.start()
    return run


def proposal(key: str, **changes: Any) -> dict[str, Any]:
    return {
        "key": key,
        "domain": "lifestyle",
        "type": "bool",
        "options": None,
        "description": "Works shifts.",
        "why": "sleep",
        **changes,
    }


def test_a_proposed_field_is_added_only_if_it_is_well_formed_new_and_in_a_known_domain() -> None:
    run = intake()
    run.llm.results["form:intake"] = extraction(
        {"shift_work": True, "pets": "a dog"},
        new_fields=[
            proposal("shift_work"),
            proposal("shift_work"),
            proposal("age"),
            proposal("Pets!"),
            proposal("pets", domain="animals", type="text"),
            proposal("diet_kind", type="choice", options=["vegan"]),
            proposal("weight", type="number", options=["a", "b"]),
            proposal("hobbies", type="text", description=" "),
        ],
    )
    run.say("I work night shifts and have a dog.")

    (added,) = run.data(FormFieldAdded)
    assert (added.key, added.type, added.domain) == ("shift_work", "bool", "lifestyle")
    reasons = [(r.key, r.reason) for r in run.data(FormRejected)]
    assert reasons == [
        ("shift_work", "the form already has this field"),
        ("age", "the form already has this field"),
        ("Pets!", "a key uses lower case letters, digits and _, from a letter"),
        ("pets", reasons[3][1]),
        ("diet_kind", "a choice needs at least two different options"),
        ("weight", "options only go with type choice, not number"),
        ("hobbies", "say what the field records (description)"),
        ("pets", reasons[7][1]),
    ]
    assert "no domain 'animals'" in reasons[3][1] and "no field 'pets'" in reasons[7][1]
    assert run.row["forms"]["intake"]["values"] == {"shift_work": True}
    prompt = run.llm.call("step:interview:reply")["messages"][0]["content"]
    assert "- shift_work: True" in prompt


def test_domains_are_counted_and_completed_and_the_model_may_complete_an_open_form() -> None:
    run = intake()
    run.llm.results["form:intake"] = extraction(
        {"age": 34}, domain="basic_info", domains_complete=["basic_info", "dreams"]
    )
    run.say("I'm 34.")
    (done,) = run.data(FormDomainCompleted)
    assert done.domain == "basic_info"
    assert [r.key for r in run.data(FormRejected)] == ["dreams"]
    prompt = run.llm.call("step:interview:reply")["messages"][0]["content"]
    assert "- Basic information: 1 of ~2 turns, 1/2 fields, complete" in prompt
    assert "Turns: 1 of a target of 30 (29 left)." in prompt

    run.llm.results["form:intake"] = extraction(domain="nowhere", form_complete=True)
    run.say("That's all.")
    assert run.data(FormRejected)[-1].item == "domain"
    assert [c.by for c in run.data(FormCompleted)] == ["model"]
    assert run.step == "post-interview"


def test_in_passive_mode_values_are_corrected_but_no_turn_is_counted_and_nothing_is_asked() -> None:
    run = intake()
    run.llm.results["form:intake"] = extraction({"age": 34}, form_complete=True)
    run.say("I'm 34, that's all.")
    assert run.step == "post-interview"
    turns = run.row["forms"]["intake"]["turns"]

    run.llm.results["form:intake"] = extraction({"age": 35})
    reply = run.say("Sorry, 35.")

    assert run.row["forms"]["intake"]["values"]["age"] == 35
    assert run.row["forms"]["intake"]["turns"] == turns
    assert run.data(FormExtracted)[-1].mode == "passive"
    assert reply is not None and "?" not in reply
    assert "step:post-interview:reply" not in run.llm.purposes()


def test_a_failed_extraction_is_recorded_and_the_step_still_answers() -> None:
    run = intake()
    run.llm.results["form:intake"] = None
    assert run.say("Hello") == "Next question?"
    assert [e.event_type for e in run.events if e.event_type.startswith("form.")] == ["form.failed"]


def test_a_whole_number_is_stored_as_an_integer_and_an_empty_text_is_no_value() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction({"patient_age": 74.0, "diagnosis": " "})
    run.say("74; no diagnosis yet.")

    assert [(v.key, v.value, type(v.value)) for v in run.data(FormValueSet)] == [
        ("patient_age", 74, int)
    ]
    assert [r.key for r in run.data(FormRejected)] == ["diagnosis"]


def test_a_choice_is_read_whatever_its_case_and_stored_as_declared() -> None:
    run = ot()
    run.llm.results["form:situation"] = extraction({"marital_status": " Widowed"})
    run.say("She lost her husband last year.")

    assert [(v.key, v.value) for v in run.data(FormValueSet)] == [("marital_status", "widowed")]
    assert run.data(FormRejected) == []
