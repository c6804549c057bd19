"""SMART stage 2 set off by a decision point decided as it fires (bot.timers.firing `Turns`):
a decision option that `start:`s the study's `stage2.at.step` re-randomises the participant,
as the same step entered in a message's turn does, and the point is still decided once.
On SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.interventions.interpreter.decision_schedule import DECISION
from bot.runtime.routing import TURNS_AT_FIRING, intervention_catalogue
from bot.runtime.worker import turns_at_firing
from bot.services.stage2 import Stage2
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.timers import firing
from bot.timers.scheduler import Scheduler
from tests.scenarios.harness import Harness, local
from tests.scenarios.test_smart_stage2 import SLUG, enroll_all, served, stage

CHECKIN = """---
title: Check-in
description: Entered only by the decision `check_in` (this test's stage-2 step).
say: "Time for a check-in. Reply with anything to get your plan."
transitions:
  - to: plan
---
"""
POINT = """---
description: The check-in (the study's stage-2 step) or nothing, after 10:00's timeouts.
when:
  times: ["11:00"]
options:
  - name: nothing
    probability: 0.1
  - name: checkin
    start: checkin
    probability: 0.9
outcome:
  reply: yes/no
  within: 60m
---
"""


def check_in_by_a_point(tmp_path: Path) -> tuple[Path, StudyCatalogue]:
    """smart-walk with a step `checkin` that only a decision option starts, and smart-demo
    with its stage 2 at that step (the interventions folder, the studies)."""
    text = (STUDIES / SLUG / "study.yaml").read_text()
    assert "at: {step: review}" in text
    (tmp_path / "studies" / SLUG).mkdir(parents=True)  # beside the interventions: their arms
    (tmp_path / "studies" / SLUG / "study.yaml").write_text(
        text.replace("at: {step: review}", "at: {step: checkin}")
    )
    root = tmp_path / "interventions"
    shutil.copytree(INTERVENTIONS / "smart-walk", root / "smart-walk")
    (root / "smart-walk" / "steps" / "checkin.md").write_text(CHECKIN)
    (root / "smart-walk" / "decisions").mkdir()
    (root / "smart-walk" / "decisions" / "check_in.md").write_text(POINT)
    studies = StudyCatalogue(tmp_path / "studies", intervention_catalogue(root))
    assert studies.refusal(SLUG) is None, studies.problems(SLUG)
    return root, studies


def test_a_decision_option_decided_at_firing_that_enters_the_stage_two_step_runs_stage_two(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    root, studies = check_in_by_a_point(tmp_path)
    h = make_harness(interventions=root, INTERVENTION="smart-walk")
    served(h, studies)
    stage2 = Stage2(studies, h.settings.master_key)
    turns = turns_at_firing(h.worker.handler, TURNS_AT_FIRING, stage2)
    at_firing: dict[str, bool] = {}  # participant -> their point decided there (not left)

    def spy(due: firing.Due) -> object:
        made = turns[DECISION](due)
        at_firing[due.participant["participant_id"]] = made is not None
        return made

    h.scheduler = Scheduler(h.services, turns={DECISION: spy})  # type: ignore[dict-item]
    people = enroll_all(h, 12)
    for phone, _, _ in people:
        h.text("1", sender=phone)  # a non-responder, now in `review` (not the stage-2 step)
    assert all(h.data("participant.stage2_assessed", pid=pid) == [] for _, pid, _ in people)

    h.until(local("11:01"))

    checked_in = 0
    for _, pid, _ in people:
        (made,) = h.data("decision.made", pid=pid)  # decided once, wherever it was
        entered = [e.step for e in h.data("step.entered", pid=pid)]
        assert ("checkin" in entered) == (made.option == "checkin")
        # Decided at firing, unless it sets off stage 2: then by a worker, which runs it.
        assert at_firing[pid] == (made.option != "checkin")
        assessed = h.data("participant.stage2_assessed", pid=pid)
        if stage(h, pid, 1)[0].arm != "tips" or made.option != "checkin":
            assert assessed == [] and stage(h, pid, 2) == []
            continue
        checked_in += 1
        (verdict,) = assessed
        assert (verdict.trigger, verdict.met) == ("step:checkin", True)
        (drawn,) = stage(h, pid, 2)
        assert drawn.arm in ("tips-daily", "tips-buddy")
        assert h.participant(pid)["arm"] == drawn.arm
    assert checked_in, "the draws sent no participant of the tips arm to the check-in"
