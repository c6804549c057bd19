"""Tool rounds inside a turn: results go back to the model, and later tools see earlier ones."""

from __future__ import annotations

from bot.store.event_types.conversation import ProfileSaved
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import ScriptedReply


def test_a_tool_round_then_a_reply_records_the_tool_and_sends_the_reply(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("I'd like to walk more")
    conversation.fake.script(
        ScriptedReply.tool_calls([("save_user_profile", {"habit_domain": "walking"})]),
        ScriptedReply.text("Walking it is! Why does it matter to you?"),
    )

    conversation.run()

    turn = [e.event_type for e in conversation.events()][-6:]
    assert turn == [
        "llm.called",
        "tool.called",
        "profile.saved",
        "llm.called",
        "message.queued",
        "work.completed",
    ]
    assert conversation.participant()["profile"]["habit_domain"] == "walking"
    told = conversation.fake.requests[1].messages[-1]
    assert told["role"] == "tool" and told["content"].startswith("SUCCESS: profile saved")
    assert conversation.bodies("reply") == ["Walking it is! Why does it matter to you?"]
    assert conversation.data("turn.failed") == []


def test_a_later_tool_in_the_turn_sees_the_schedule_an_earlier_one_created(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("9:30 every morning please")
    conversation.fake.script(
        ScriptedReply.tool_calls(
            [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "09:30"})]
        ),
        ScriptedReply.tool_calls([("scheduler", {"action": "list"})]),
        ScriptedReply.text("Done: a prompt every day at 9:20."),
    )

    conversation.run()

    created, listed = conversation.data("tool.called")
    (schedule,) = conversation.data("schedule.created")
    assert schedule.schedule_id in listed.result
    assert listed.result.startswith("Daily prompts (1):")


def test_a_second_delayed_transition_in_one_turn_replaces_the_first(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("check on me later")
    conversation.fake.script(
        ScriptedReply.tool_calls(
            [("transition_state", {"target_state": "feedback", "delay_minutes": 30})]
        ),
        ScriptedReply.tool_calls(
            [("transition_state", {"target_state": "feedback", "delay_minutes": 60})]
        ),
        ScriptedReply.text("I'll check in within the hour."),
    )

    conversation.run()

    first, second = conversation.data("timer.scheduled")
    (cancelled,) = conversation.data("timer.cancelled")
    assert cancelled.timer_id == first.timer_id
    assert second.timer_id != first.timer_id


def test_a_second_supervisor_alert_in_one_turn_is_refused_by_the_tool(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("can a real person call me")
    conversation.fake.script(
        ScriptedReply.tool_calls([("alert_supervisor", {"summary": "Asks for a person."})]),
        ScriptedReply.tool_calls([("alert_supervisor", {"summary": "Asks again."})]),
        ScriptedReply.text("Someone from the team will be in touch."),
    )

    conversation.run()

    assert len(conversation.data("alert.raised")) == 1
    (refused,) = conversation.data("tool.failed")
    assert refused.error.startswith("Alert not sent: the supervisors already got an alert")


def test_tools_that_ran_before_the_llm_failed_are_still_recorded(
    conversation: Conversation,
) -> None:
    conversation.enroll(source="auto")
    conversation.receive("after my coffee")
    conversation.fake.script(
        ScriptedReply.tool_calls([("save_user_profile", {"prompt_anchor": "after coffee"})]),
        ScriptedReply.error(500, "boom"),
    )

    conversation.run()

    assert conversation.data("profile.saved") == [
        ProfileSaved(changes={"prompt_anchor": "after coffee"})
    ]
    (failed,) = conversation.data("turn.failed")
    assert failed.reason == "LLM call failed: HTTP 500: boom"
    assert conversation.bodies("reply") == [failed.fallback]
