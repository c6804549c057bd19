"""The intake module: its prompt shows what is known and missing, and the greeting trigger."""

from __future__ import annotations

from bot.conversation.module import ENROLLED
from modules import intake
from tests.modules.stub import Recorder, context


def test_the_prompt_lists_the_saved_profile_and_what_is_still_missing() -> None:
    recorder = Recorder()
    profile = {"habit_domain": "walking", "prompt_anchor": "after coffee", "success_count": 0}

    intake.MODULE.run(context({"profile": profile}, recorder))

    assert "- habit_domain: walking\n- prompt_anchor: after coffee" in recorder.system
    assert "Still to find out: motivational_frame, preferred_time." in recorder.system


def test_the_prompt_shows_the_participants_background_and_local_time() -> None:
    recorder = Recorder()
    row = {"name": "Ana", "gender": "female", "background": "works night shifts"}

    intake.MODULE.run(context(row, recorder))

    assert "- Name: Ana\n- Gender: female\n- Background: works night shifts" in recorder.system
    assert "It is 09:00 on Monday 2 March 2026 for the participant (America/Toronto)." in (
        recorder.system
    )


def test_the_tone_policy_is_added_only_when_tone_tags_are_active() -> None:
    plain, toned = Recorder(), Recorder()
    tone = {"tone_tags": ["concise", "no_emojis"], "tone_scores": {"concise": 1, "no_emojis": 1}}

    intake.MODULE.run(context({}, plain))
    intake.MODULE.run(context({"profile": tone}, toned))

    assert "<TONE POLICY>" not in plain.system
    assert toned.system.split("\n\n")[-1].startswith("<TONE POLICY>")
    assert "- Do NOT use emojis." in toned.system


def test_enrollment_adds_the_greeting_trigger_after_the_transcript() -> None:
    recorder = Recorder("Hello!")

    reply = intake.MODULE.run(context({}, recorder, trigger="enrolled", transcript=[]))

    messages = recorder.calls[0]["messages"]
    assert messages[1:] == [{"role": "system", "content": ENROLLED}]
    assert "start of the conversation" in messages[0]["content"]
    greeting = intake.MODULE.prompt.greeting_fallback
    assert (reply.result.text, reply.greeting) == ("Hello!", greeting)
    assert reply.fallback == intake.MODULE.prompt.fallback


def test_intake_offers_its_tools_by_name_under_its_own_purpose() -> None:
    recorder = Recorder()

    intake.MODULE.run(context({}, recorder))

    assert recorder.calls[0]["purpose"] == "intake"
    assert recorder.calls[0]["tools"] == [
        "save_user_profile",
        "generate_habit_prompt",
        "scheduler",
        "transition_state",
        "alert_supervisor",
    ]
