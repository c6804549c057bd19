"""generate_habit_prompt: preconditions, the generator's prompt, intensity, tone, failures."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bot.conversation.tooling import ToolOutcome
from tests.tools import context, participant
from tools.generate_habit_prompt import GenerateHabitPrompt, run

READY = {"prompt_anchor": "after coffee", "preferred_time": "9am", "habit_domain": "walking"}
PROMPT = "After coffee, try a 1-minute walk — it helps you wake up. Would that feel doable?"


class FakeCompleter:
    """Records each call and answers with a scripted reply (or raises it)."""

    def __init__(self, reply: Any = PROMPT) -> None:
        self.reply = reply
        self.calls: list[dict[str, str]] = []

    def __call__(self, system: str, user: str, purpose: str) -> str:
        self.calls.append({"system": system, "user": user, "purpose": purpose})
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def _generate(
    profile: dict[str, Any] | None = None,
    completer: FakeCompleter | None = None,
    mode: str = "immediate",
    notes: str | None = None,
) -> ToolOutcome:
    args = GenerateHabitPrompt(delivery_mode=mode, personalization_notes=notes)  # type: ignore[arg-type]
    who = participant(profile=READY if profile is None else profile)
    return run(args, context(who=who, complete=completer or FakeCompleter()))


def _system(**profile: Any) -> str:
    completer = FakeCompleter()
    _generate({**READY, **profile}, completer)
    return completer.calls[0]["system"]


def test_delivery_mode_is_required() -> None:
    with pytest.raises(ValidationError, match="delivery_mode\n  Field required"):
        GenerateHabitPrompt.model_validate({})


def test_an_unknown_delivery_mode_is_refused_naming_the_modes() -> None:
    with pytest.raises(ValidationError, match="Input should be 'immediate' or 'scheduled'"):
        GenerateHabitPrompt.model_validate({"delivery_mode": "later"})


def test_a_profile_without_an_anchor_fails_naming_it() -> None:
    outcome = _generate({"preferred_time": "9am"})
    assert not outcome.ok
    assert outcome.message == (
        "Failed to generate prompt: profile incomplete: missing prompt_anchor (the moment the "
        "habit follows, e.g. 'after coffee'); save it with save_user_profile"
    )


def test_a_profile_without_a_preferred_time_fails_naming_it() -> None:
    outcome = _generate({"prompt_anchor": "after coffee"})
    assert not outcome.ok
    assert "missing preferred_time (when they want the prompt" in outcome.message


def test_an_empty_profile_fails_naming_both_missing_fields() -> None:
    outcome = _generate({})
    assert "missing prompt_anchor (" in outcome.message and "; preferred_time (" in (
        outcome.message
    )


def test_the_generator_is_not_called_for_an_incomplete_profile() -> None:
    completer = FakeCompleter()
    _generate({}, completer)
    assert completer.calls == []


def test_without_a_completer_the_tool_fails_saying_so() -> None:
    args = GenerateHabitPrompt(delivery_mode="immediate")
    outcome = run(args, context(who=participant(profile=READY)))
    assert outcome.message == (
        "Failed to generate prompt: no prompt generator is configured for this conversation"
    )


def test_the_generated_prompt_is_the_message_and_nothing_is_recorded_by_the_tool() -> None:
    outcome = _generate()
    assert outcome.ok and outcome.message == PROMPT and outcome.events == []


def test_the_generator_is_called_for_the_generate_habit_prompt_purpose() -> None:
    completer = FakeCompleter()
    _generate(completer=completer)
    assert [c["purpose"] for c in completer.calls] == ["generate_habit_prompt"]


def test_surrounding_quotes_are_stripped() -> None:
    assert _generate(completer=FakeCompleter(f' "{PROMPT}" ')).message == PROMPT
    assert _generate(completer=FakeCompleter(f"“{PROMPT}”")).message == PROMPT


def test_quotes_inside_the_prompt_are_kept() -> None:
    text = 'After coffee, try "box breathing" — it calms you. Doable?'
    assert _generate(completer=FakeCompleter(text)).message == text


@pytest.mark.parametrize("reply", [None, "", '  ""  '])
def test_an_empty_generation_is_a_failure(reply: Any) -> None:
    outcome = _generate(completer=FakeCompleter(reply))
    assert not outcome.ok
    assert outcome.message == (
        "Failed to generate prompt: the generator returned no text; try again or write the "
        "prompt yourself"
    )


def test_a_failing_generator_call_is_a_failure_naming_the_error() -> None:
    outcome = _generate(completer=FakeCompleter(TimeoutError("LLM timed out after 30 s")))
    assert not outcome.ok
    assert outcome.message == (
        "Failed to generate prompt: the generator call failed (TimeoutError: LLM timed out "
        "after 30 s)"
    )


def test_the_user_message_lists_the_profile() -> None:
    completer = FakeCompleter()
    _generate({**READY, "motivational_frame": "more energy"}, completer)
    user = completer.calls[0]["user"]
    for line in ("Anchor: after coffee", "Preferred time: 9am", "Motivation: more energy"):
        assert line in user.splitlines()


def test_the_generator_is_asked_for_the_map_shape_in_under_30_words() -> None:
    system = _system()
    assert "MAP framework" in system and "under 30 words" in system


def test_low_intensity_asks_for_a_smaller_easier_version() -> None:
    assert "a smaller, easier version" in _system(intensity="low")


def test_high_intensity_asks_for_a_slightly_more_ambitious_version() -> None:
    assert "a slightly more ambitious version" in _system(intensity="high")


def test_the_intensity_changes_what_the_generator_is_asked() -> None:
    low, normal, high = (_system(intensity=level) for level in ("low", "normal", "high"))
    assert len({low, normal, high}) == 3


def test_a_missing_intensity_is_treated_as_normal() -> None:
    assert _system() == _system(intensity="normal")


def test_successes_the_last_barrier_and_the_last_tweak_reach_the_generator() -> None:
    system = _system(success_count=3, last_barrier="too tired", last_tweak="shorter walks")
    assert "completed 3 habit prompt(s)" in system
    assert "too tired" in system and "shorter walks" in system


def test_the_active_tone_reaches_the_generator() -> None:
    assert "- Do NOT use emojis." in _system(tone_tags=["no_emojis"])


def test_without_active_tone_tags_there_is_no_tone_policy() -> None:
    assert "<TONE POLICY>" not in _system()


def test_the_delivery_mode_and_notes_reach_the_generator() -> None:
    completer = FakeCompleter()
    _generate(completer=completer, mode="scheduled", notes="they walk the dog")
    system = completer.calls[0]["system"]
    assert "scheduled daily prompt" in system and "they walk the dog" in system
