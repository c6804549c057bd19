"""The safety interrupt end to end: a yes/no judgement flags a message that came through the
signed webhook, the interrupt fires, the supervisor is texted and the safety step speaks; the
same intervention with the condition written against the wrong type does not validate."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from tests.fakes.openai_api import ScriptedReply
from tests.interventions.variants import problems
from tests.scenarios.harness import SCENARIO_INTERVENTIONS, SUPERVISOR, Harness

SAFETY = (
    "I'm worried about what you said. If you are in danger, call your local emergency number now."
)


def test_a_yes_no_judgement_fires_the_safety_interrupt_through_the_webhook(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(
        SCENARIO_INTERVENTIONS, INTERVENTION="safety-flag", SUPERVISOR_PHONES=SUPERVISOR
    )
    h.script(ScriptedReply.text("Hello! How are you today?"))
    assert h.enroll(name="Sam", intervention="safety-flag").status_code == 201
    h.script(
        ScriptedReply.structured({"flagged": False, "reason": "Small talk."}),
        ScriptedReply.text("I'm glad to hear it."),
    )
    h.text("Fine thanks")
    h.script(ScriptedReply.structured({"flagged": True, "reason": "Hopeless."}))

    h.text("Honestly, what is the point of anything.")

    assert h.outbound() == ["Hello! How are you today?", "I'm glad to hear it.", SAFETY]
    assert h.participant()["current_step"] == "safety"
    (alert,) = [a for a in h.data("alert.raised") if a.severity == "critical"]
    assert alert.notify_supervisors and "flagged a message" in alert.summary
    (texted,) = h.outbound(SUPERVISOR)
    assert texted.startswith("Tandem alert about participant ")
    assert h.llm.pending == 0


def test_the_same_interrupt_written_against_the_wrong_type_does_not_validate(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "safety-flag"
    shutil.copytree(SCENARIO_INTERVENTIONS / "safety-flag", folder)
    safety = folder / "steps" / "safety.md"
    safety.write_text(
        safety.read_text().replace(
            "when: judgements.risk.flagged == true", 'when: judgements.risk.flagged == "yes"'
        )
    )

    assert problems(folder) == [
        "steps/safety.md:4: condition `judgements.risk.flagged == \"yes\"`: '==' compares "
        'values of one type, but `judgements.risk.flagged` is yes/no (or none) and `"yes"` '
        "is text (write true or false, without quotes)"
    ]
