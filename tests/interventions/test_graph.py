"""The Mermaid graph shows steps, numbered labelled transitions, judgements, digressions,
interrupts and the session start."""

from __future__ import annotations

from pathlib import Path

from bot.interventions.language.graph import mermaid
from bot.interventions.language.loader import load_intervention
from bot.interventions.language.module_graph import CycleTimes
from tests.interventions.variants import FIXTURES, GOOD

HABIT_COACH = Path(__file__).resolve().parents[2] / "interventions" / "habit-coach"


def test_the_graph_of_the_fixture() -> None:
    text = mermaid(load_intervention(GOOD))

    assert text.startswith("%% Fixture coach (version 1)\nflowchart TD\n")
    assert '  s_welcome["Welcome"]:::root' in text
    assert '  s_clarify(["Clarify"]):::digression' in text
    assert '  s_risk_check{{"Risk check"}}:::interrupt' in text
    assert "  start((start)) --> s_welcome" in text
    assert (
        '  s_welcome -->|"(1) judgements.ready.answer == #quot;yes#quot; [set]"| s_explore'
    ) in text
    assert (
        '  s_welcome -->|"(2) judgements.ready.answer == #quot;no#quot; — or after 3 turns"| '
        in (text)
    )
    assert '  anywhere ==>|"judgements.risk.level == #quot;high#quot;"| s_risk_check' in text
    assert '  anywhere ==>|"silent for 48 h"| s_recap' in text
    assert (
        '  s_risk_check -.->|"judgements.risk.level == #quot;none#quot; — or after 3 turns"| back'
        in text
    )
    assert '  s_explore -.-|"each turn"| j_engaged' in text
    assert '  anywhere -.-|"each turn"| j_risk' in text


def test_an_intervention_in_modules_draws_each_module_and_the_daily_cycle_with_its_timers() -> None:
    habit = load_intervention(HABIT_COACH)
    tools = {
        "intake": ("save_user_profile", "scheduler", "transition_state"),
        "feedback": ("transition_state",),
    }

    text = mermaid(habit, tools, CycleTimes(prep_minutes=15, reminder_hours=4))

    lines = text.splitlines()
    assert '  start((start)) --> m_intake[["module: intake"]]' in lines
    assert '  m_intake -->|"transition_state"| m_feedback' in lines
    assert '  m_feedback -->|"transition_state"| m_intake' in lines
    assert '  t_daily{{"timer daily: the habit time − 15 min"}}' in lines
    assert '  m_intake -.->|"scheduler: create"| t_daily' in lines
    assert '  m_feedback -.->|"scheduler: create"| t_daily' not in lines
    assert '  c_prompt -.->|"no reply in 4 h"| t_reminder{{"timer reminder"}}' in lines
    assert '  t_feedback -->|"to feedback"| m_feedback' in lines


def test_without_a_reminder_or_auto_feedback_their_timers_are_not_drawn() -> None:
    habit = load_intervention(HABIT_COACH)
    tools = {"intake": ("scheduler", "transition_state"), "feedback": ("transition_state",)}

    text = mermaid(habit, tools, CycleTimes(reminder_hours=0, auto_feedback_minutes=0))

    assert "t_daily" in text
    assert "t_reminder" not in text and "t_feedback" not in text


def test_libraries_are_drawn_with_the_steps_that_retrieve_from_them() -> None:
    drawn = mermaid(load_intervention(FIXTURES / "library"))

    assert '  l_scenarios[("library: scenarios")]:::library' in drawn
    assert '  s_mentoring -.-|"each turn"| l_tips' in drawn
    assert '  s_intake -.-|"at transition (1)"| l_scenarios' in drawn
    assert '"(1) step.turns >= 1 [retrieve scenarios]"' in drawn
