"""The shipped interventions as researchers meet them: each README shows the graph the CLI
draws now, the default intervention is the demo and needs no LLM, and habit-coach starts in
the intake module."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.config import load_settings
from bot.interventions.language.graph import mermaid
from bot.interventions.language.loader import load_intervention
from bot.interventions.validation.validate import intervention_folders
from modules.step import StepModule

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"


@pytest.mark.parametrize("folder", intervention_folders(SHIPPED), ids=lambda p: p.name)
def test_the_readme_shows_the_current_graph(folder: Path) -> None:
    readme = (folder / "README.md").read_text()

    assert f"```mermaid\n{mermaid(load_intervention(folder))}```" in readme, (
        f"regenerate with: tandem interventions graph interventions/{folder.name}"
    )


def test_the_default_intervention_is_the_demo_which_starts_at_a_step() -> None:
    slug = load_settings({}, env_file=None).intervention

    demo = load_intervention(SHIPPED / slug)

    assert slug == "demo" and demo.root == "welcome" and demo.config.module is None


def test_nothing_in_the_demo_can_call_the_llm() -> None:
    demo = load_intervention(SHIPPED / "demo")

    assert all(step.say is not None and not step.tools for step in demo.steps.values())
    assert demo.judgements == {} and demo.notes == {}
    assert all(not question.llm for question in demo.questions.values())


def test_habit_coach_participants_stay_in_the_intake_module() -> None:
    coach = load_intervention(SHIPPED / "habit-coach")
    participant = {"conversation_state": "intake", "intervention": "habit-coach"}

    assert StepModule(root=SHIPPED).opening(participant, [], "enrolled") == []
    assert '  start((start)) --> m_intake[["module: intake"]]' in mermaid(coach)
