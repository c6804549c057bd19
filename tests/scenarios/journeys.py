"""The "Given" steps the scenarios share: an enrolled participant, intake that sets up a daily
habit prompt through the real tools, and a second habit schedule where a study allows two."""

from __future__ import annotations

from typing import Any

from bot.conversation.tooling import ToolContext
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import Harness
from tools.scheduler import Scheduler
from tools.scheduler import run as scheduler

GREETING = "Hi Ana! I'm here to help you build one small daily habit. What would you like to try?"
PROFILE = {
    "habit_domain": "walking",
    "motivational_frame": "a clearer head",
    "preferred_time": "9:30am",
    "prompt_anchor": "after my morning coffee",
}
PROMPT = (
    "After your morning coffee, walk for one minute — it clears your head. Would that feel doable?"
)
ALL_SET = "All set! Your first prompt comes at 9:20."
DID_YOU = "Did you do it?\n1. Done\n2. Next time"
INTENSITY = "How's the intensity?\n1. Decrease\n2. Keep current\n3. Increase"


def enrolled(h: Harness, **fields: Any) -> str:
    """Enrolled through the API and greeted by the intake module; returns the id."""
    h.script(ScriptedReply.text(GREETING))
    response = h.enroll(name="Ana", **fields)
    assert response.status_code == 201, response.get_json()
    assert h.outbound() == [GREETING]
    return h.pid


def set_up_habit(
    h: Harness,
    habit_time: str = "09:30",
    *,
    profile: dict[str, Any] | None = PROFILE,
    to_feedback: bool = False,
) -> None:
    """One intake turn in which the model saves the profile, creates the daily prompt (sent
    10 minutes before `habit_time`) and, if asked, moves the conversation to feedback."""
    calls: list[tuple[str, dict | str]] = []
    if profile:
        calls.append(("save_user_profile", profile))
    calls.append(("scheduler", {"action": "create", "type": "fixed", "fixed_time": habit_time}))
    if to_feedback:
        calls.append(("transition_state", {"target_state": "feedback"}))
    h.script(ScriptedReply.tool_calls(calls), ScriptedReply.text(ALL_SET))
    h.text(f"Walking, after my morning coffee, at {habit_time} please")
    failures = h.data("tool.failed")
    assert not failures, failures


def add_habit_schedule(h: Harness, habit_time: str) -> None:
    """A second daily habit prompt, as the scheduler tool makes it for a study whose
    `max_schedules` is 2 (the conversation engine offers one by default)."""
    ctx = ToolContext(
        participant=h.participant(),
        now=h.clock.now(),
        history=h.events(),
        pending_timers=h.timers(status="scheduled"),
        options={"max_schedules": 2},
    )
    outcome = scheduler(Scheduler(action="create", type="fixed", fixed_time=habit_time), ctx)
    assert outcome.ok, outcome.message
    h.append(*outcome.events)


def generated(*texts: str) -> list[ScriptedReply]:
    """The generator's answers for the next daily prompts."""
    return [ScriptedReply.text(text) for text in texts]
