"""The variables every module prompt is rendered with (pure): profile, background, local time.

PromptPipe wrote the participant's background at enrollment and never showed it to the LLM;
here it is part of every prompt. A template must use only these names (StrictUndefined).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.conversation.daily_cycle.counters import count
from bot.conversation.transcript_llm import shown
from bot.store.event_types.messages import MessageQueued
from bot.store.events import Event
from bot.timers.one_shot import zone_of

# Profile fields a prompt shows, in this order (tone and counters have their own variables).
PROFILE_FIELDS = (
    "habit_domain",
    "motivational_frame",
    "preferred_time",
    "prompt_anchor",
    "additional_info",
    "intensity",
    "last_successful_prompt",
    "last_barrier",
    "last_motivator",
    "last_tweak",
)
# What intake must collect before it can offer a habit prompt and a schedule.
INTAKE_FIELDS = ("habit_domain", "motivational_frame", "preferred_time", "prompt_anchor")
BACKGROUND = (
    ("Name", "name"),
    ("Gender", "gender"),
    ("Ethnicity", "ethnicity"),
    ("Background", "background"),
)


def prompt_variables(
    participant: Mapping[str, Any],
    now: datetime,
    history: Sequence[Event],
    trigger: str,
    *,
    contacted: bool | None = None,
) -> dict[str, Any]:
    """The engine's variables (documented in docs/conversation.md). `contacted`: whether the
    conversation sent the participant anything yet (the turn's memory); None: from `history`."""
    if contacted is None:
        contacted = any(isinstance(ev.data, MessageQueued) and shown(ev.data) for ev in history)
    profile = participant.get("profile") or {}
    zone = zone_of(participant)
    local = now.astimezone(zone)
    return {
        "trigger": trigger,
        "name": _text(participant.get("name")) or None,
        "background": _background(participant),
        "profile": [(f, _text(profile.get(f))) for f in PROFILE_FIELDS if _text(profile.get(f))],
        "missing": [f for f in INTAKE_FIELDS if not _text(profile.get(f))],
        "local_time": f"{local:%H:%M}",
        "local_date": f"{local:%A} {local.day} {local:%B %Y}",
        "timezone": zone.key,
        "success_count": count(participant, "success_count"),
        "total_prompts": count(participant, "total_prompts"),
        "first_contact": not contacted,
    }


def _background(participant: Mapping[str, Any]) -> list[str]:
    """Lines such as "Name: Ana", only for what the study team entered."""
    values = [(label, _text(participant.get(key))) for label, key in BACKGROUND]
    return [f"{label}: {value}" for label, value in values if value]


def _text(value: Any) -> str:
    return str(value).strip() if value is not None else ""
