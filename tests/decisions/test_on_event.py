"""Decision points `on:` an event, run through a deployment (the signed webhook, the worker):
one for each message received, one when the named step is entered, each indexed in turn,
drawn with the deployment's seed and audited; an unknown event is refused at file:line."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.interventions.interpreter.decision_audit import check_points
from bot.interventions.interpreter.decision_timers import draw_seed
from bot.interventions.validation.decisions_check import decision_problems
from bot.store.event_types.decisions import DecisionMade
from tests.conftest import TEST_MASTER_KEY
from tests.scenarios.harness import Harness

ON_REPLY = """---
when: {on: message.received}
options:
  - {name: nothing, probability: 0.5}
  - {name: cheer, send: "Nice to hear from you.", probability: 0.5}
outcome: {count: received, window: 1h}
---
"""
ON_WELCOME = """---
when:
  on: step.entered
  step: welcome
options:
  - {name: nothing, probability: 0.3}
  - {name: tip, send: "Tip: a walk after lunch.", probability: 0.7}
outcome: {reply: yes/no, within: 30m}
---
"""


def test_points_come_on_each_message_and_on_entering_the_named_step(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    root = tmp_path / "interventions"
    shutil.copytree(INTERVENTIONS / "walk-mrt", root / "walk-mrt")
    (root / "walk-mrt" / "decisions" / "on_reply.md").write_text(ON_REPLY)
    (root / "walk-mrt" / "decisions" / "on_welcome.md").write_text(ON_WELCOME)
    h = make_harness(root, INTERVENTION="walk-mrt")
    assert h.enroll(name="Ana", intervention="walk-mrt").status_code == 201
    h.text("hello")
    h.text("still here")

    points: list[DecisionMade] = [
        p for p in h.data("decision.made") if p.decision in ("on_reply", "on_welcome")
    ]
    assert [(p.decision, p.index) for p in points] == [
        ("on_welcome", 0), ("on_reply", 0), ("on_reply", 1)
    ]  # fmt: skip
    assert all(p.available and p.option is not None for p in points)
    received = [e.occurred_at for e in h.events("message.received")]
    assert [p.scheduled_for for p in points[1:]] == received  # due when each message came
    seed = draw_seed(TEST_MASTER_KEY)
    assert check_points(seed, [(h.pid, p) for p in points]) == []
    sent = h.outbound()
    assert ("Tip: a walk after lunch." in sent) == (points[0].option == "tip")
    cheers = [p for p in points[1:] if p.option == "cheer"]
    assert sent.count("Nice to hear from you.") == len(cheers)
    assert h.participant()["step_counters"]["decisions"]["on_reply"] == 2


def test_an_unknown_event_is_refused_at_its_line() -> None:
    text = ON_REPLY.replace("message.received", "message.sent")
    [problem] = decision_problems("decisions/on_reply.md", text)
    assert problem.line == 2 and "when.on" in problem.message
    assert "message.received" in problem.message and "step.entered" in problem.message
