"""GET /conversation/participants/{id}/forms: each form's fields with where each value came
from, and the clock the engine computes, through the real webhook and the scripted LLM."""

from __future__ import annotations

from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import Harness


def test_the_forms_endpoint_shows_the_values_their_messages_and_the_clock(make_harness) -> None:
    h: Harness = make_harness(INTERVENTION="ot-mentor")
    h.script(ScriptedReply.text("Hello, tell me about the situation."))
    assert h.enroll(name="Priya").status_code == 201
    values = [{"key": "patient_age", "value": 74}, {"key": "diagnosis", "value": "stroke"}]
    h.script(ScriptedReply.structured({"analysis": "age and diagnosis", "values": values}))
    h.script(ScriptedReply.text("Thank you. What is her background?"))
    h.text("My patient is 74 and had a stroke.")

    response = h.api("GET", f"/participants/{h.pid}/forms")

    assert response.status_code == 200, response.get_json()
    (form,) = response.get_json()["result"]
    assert (form["name"], form["complete"]) == ("situation", False)
    by_key = {f["key"]: f for f in form["fields"]}
    assert len(by_key) == 18 and by_key["patient_age"]["value"] == 74
    received = h.events("message.received")[-1]
    assert by_key["patient_age"]["message_seq"] == received.seq
    assert by_key["patient_age"]["message_id"] == received.event_id
    assert by_key["setting"]["value"] is None and by_key["setting"]["set_at"] is None
    clock = form["clock"]
    assert (clock["known"], clock["wanted"]) == (2, 18)
    assert (clock["critical_known"], clock["critical_total"]) == (2, 5)
    assert clock["missing_critical"] == ["therapist_role", "cultural_background", "marital_status"]
    assert clock["turns"] == 1 and "Fields known: 2 of 18" in clock["text"]


def test_the_forms_of_an_unknown_participant_are_a_404(make_harness) -> None:
    h: Harness = make_harness(INTERVENTION="ot-mentor")

    response = h.api("GET", "/participants/7f0c2f0e-0000-4000-8000-000000000000/forms")

    assert response.status_code == 404
