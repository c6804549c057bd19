"""`set:` actions: typed expressions evaluated when the action runs, `profile.saved` only for
values that change, and a value that cannot be computed stops the turn loudly."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.store.event_types.conversation import ProfileSaved
from bot.store.event_types.interventions import ConditionFailed
from tests.interventions.variants import variant
from tests.modules.step_harness import Run
from tests.scenarios.harness import SCENARIO_INTERVENTIONS


def test_a_value_set_again_unchanged_is_not_saved_again(tmp_path: Path) -> None:
    folder = variant(
        tmp_path,
        "steps/welcome.md",
        replace=("  - schedule: mood\n", "  - set: {started: false}\n  - set: {started: false}\n"),
    )
    run = Run(folder)

    run.start()

    assert run.data(ProfileSaved) == [
        ProfileSaved(changes={"started": False}, source="intervention")
    ]


def test_a_set_value_that_cannot_be_computed_is_a_condition_failure(tmp_path: Path) -> None:
    folder = tmp_path / "goal-setting"
    shutil.copytree(SCENARIO_INTERVENTIONS / "goal-setting", folder)
    ask = folder / "steps" / "ask.md"
    text = ask.read_text().replace(" and judgements.goal.goal != none", "")
    text = text.replace(
        "minutes: judgements.goal.minutes}", "minutes: judgements.goal.minutes + 0}"
    )
    ask.write_text(text.replace("judgements.goal.minutes != none", "judgements.goal.goal != none"))
    run = Run(folder)
    run.llm.says("step:ask:reply", "What would you like to do?")
    run.start()
    run.llm.judges("goal", goal="walk", minutes=None)

    reply = run.say("walking")

    assert reply == "Sorry, something went wrong on our side. We'll be in touch."
    (failed,) = run.data(ConditionFailed)
    assert (failed.condition, failed.line) == ("judgements.goal.minutes + 0", 8)
    assert failed.error.startswith("set: profile.minutes: '+' works on numbers only")
    assert run.data(ProfileSaved) == []


def test_a_set_value_outside_the_declared_range_is_a_condition_failure() -> None:
    run = Run(SCENARIO_INTERVENTIONS / "goal-setting")
    run.llm.says("step:ask:reply", "What would you like to do?")
    run.start()
    run.llm.judges("goal", goal="walk", minutes=0)

    run.say("walking, zero minutes")

    (failed,) = run.data(ConditionFailed)
    assert (failed.condition, failed.line) == ("judgements.goal.minutes", 8)
    assert failed.error == "set: profile.minutes: 0 is outside the declared range (1 to any)"
    assert run.data(ProfileSaved) == []
