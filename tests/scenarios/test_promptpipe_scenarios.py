"""The 25 acceptance scenarios of the PromptPipe reference (§10.2), adapted to Tandem, end to
end: the researcher API and signed Twilio webhooks into the Flask app, the real flow and tools
with the openai SDK against a scripted LLM, the real dispatcher with the Twilio SDK against a
fake Twilio, and durable timers on a FakeClock in America/Toronto. Where Tandem deliberately
does better than PromptPipe (the (B) items) the better behaviour is asserted."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, timedelta

import pytest

from bot.conversation.daily_cycle.prompt import REMINDER_TEXT
from bot.store.event_types.conversation import ProfileSaved, StateTransitioned
from bot.store.leases import acquire, release
from modules import intake
from tests.factories import enrolled as enrolment
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import PHONE, SUPERVISOR, Harness, local
from tests.scenarios.journeys import (
    ALL_SET,
    DID_YOU,
    GREETING,
    INTENSITY,
    PROFILE,
    PROMPT,
    add_habit_schedule,
    enrolled,
    generated,
    set_up_habit,
)
from tools.scheduler import FALLBACK_TEXT

OTHER_PHONE = "+14165550177"
TOLD = "Thanks! Tell me more."


def tool_results(h: Harness) -> list[str]:
    return [c.result for c in h.data("tool.called")]


# -- enrollment and unknown senders (1-5) -------------------------------------------------------


def test_enrolling_a_participant_answers_201_and_the_intake_module_greets_them(h: Harness) -> None:
    """Scenario 1 (R, B: the timezone is stored and returned)."""
    h.script(ScriptedReply.text(GREETING))

    response = h.enroll(phone_number="+1 (416) 555-0123", name="Ana")

    assert response.status_code == 201
    body = response.get_json()
    assert (body["status"], body["message"]) == (
        "ok",
        "Conversation participant enrolled successfully",
    )
    result = body["result"]
    assert str(uuid.UUID(result["id"])) == result["id"]
    assert (result["status"], result["timezone"], result["conversation_state"]) == (
        "active",
        "America/Toronto",
        "intake",
    )
    assert result["phone_number"] == PHONE
    assert h.outbound() == [GREETING]
    assert [q.kind for q in h.data("message.queued")] == ["greeting"]
    assert h.types()[:2] == ["participant.enrolled", "llm.called"]
    (request,) = h.requests  # from an explicit trigger, never a fake participant message
    assert [m["role"] for m in request.messages] == ["system", "system"]
    assert "just been enrolled" in request.messages[-1]["content"]
    stored = h.api("GET", f"/participants/{h.pid}").get_json()["result"]
    assert stored["timezone"] == "America/Toronto"


def test_an_enrollment_while_the_llm_is_down_still_answers_201_and_retries_the_greeting(
    h: Harness,
) -> None:
    """Scenario 1, extra candidate: the greeting is written after the request, by the worker;
    a failed one is retried (tests/scenarios/test_turn_retry.py), never sent as a fallback."""
    h.script(ScriptedReply.error(500, "overloaded"))

    response = h.enroll(name="Ana")

    assert response.status_code == 201
    assert h.outbound() == []
    (failed,) = h.data("turn.failed")
    assert failed.reason == "LLM call failed: HTTP 500: overloaded"
    assert [t["kind"] for t in h.timers()] == ["turn_retry"]


def test_a_duplicate_or_invalid_enrollment_is_refused_and_sends_nothing(h: Harness) -> None:
    """Scenario 2 (R): 409 for the same number in any format, 400 naming the bad field."""
    enrolled(h)

    duplicate = h.enroll(phone_number="(416) 555-0123")
    empty = h.api("POST", "/participants", {})
    short = h.api("POST", "/participants", {"phone_number": "12345"})
    mars = h.api("POST", "/participants", {"phone_number": OTHER_PHONE, "timezone": "Mars/Base"})

    assert duplicate.status_code == 409
    assert duplicate.get_json()["message"] == (
        "phone_number: Participant with this phone number already enrolled"
    )
    assert empty.status_code == 400 and empty.get_json()["message"].startswith("phone_number")
    assert short.status_code == 400
    assert short.get_json()["message"].startswith("phone_number: invalid phone number")
    assert mars.status_code == 400
    assert mars.get_json()["message"].startswith("timezone: unknown timezone 'Mars/Base'")
    assert h.outbound() == [GREETING]
    assert len(h.requests) == 1
    assert h.api("GET", "/participants").get_json()["page"]["total"] == 1


def test_an_unknown_sender_gets_the_configured_reply_and_is_not_enrolled(make_harness) -> None:
    """Scenario 3 (R, B: the text and whether to reply are settings)."""
    recorded = "📝 Your message has been recorded. Thank you for your response!"
    h = make_harness(UNKNOWN_SENDER_POLICY="reply", UNKNOWN_SENDER_REPLY=recorded)

    h.text("hi", sender=OTHER_PHONE)

    assert h.outbound(OTHER_PHONE) == [recorded]
    assert h.api("GET", "/participants").get_json()["page"]["total"] == 0
    assert h.requests == []
    quiet = h.restart(UNKNOWN_SENDER_POLICY="ignore")
    quiet.text("hello again", sender=OTHER_PHONE)
    assert quiet.outbound(OTHER_PHONE) == [recorded]


def test_auto_enrollment_answers_the_first_message_itself_and_enrolls_once(make_harness) -> None:
    """Scenario 4 (R): UNKNOWN_SENDER_POLICY=enroll; no separate welcome."""
    h = make_harness(UNKNOWN_SENDER_POLICY="enroll")
    h.script(ScriptedReply.text("Walking more is a great goal! Why does it matter to you?"))

    h.text("I want to walk more")

    (person,) = h.api("GET", "/participants").get_json()["result"]
    h.pid = person["id"]
    assert (person["status"], person["conversation_state"], person["name"]) == (
        "active",
        "intake",
        None,
    )
    assert h.outbound() == ["Walking more is a great goal! Why does it matter to you?"]
    (request,) = h.requests
    assert request.messages[-1] == {"role": "user", "content": "I want to walk more"}
    h.script(ScriptedReply.text("Got it."))
    h.text("To feel better")
    assert h.api("GET", "/participants").get_json()["page"]["total"] == 1
    assert h.outbound()[-1] == "Got it."


@pytest.mark.parametrize(
    ("state", "reason"),
    [
        ("", "no conversation state; routed to intake"),
        ("PROMPT_GENERATOR", "unknown conversation state 'PROMPT_GENERATOR'; routed to intake"),
    ],
    ids=["missing", "legacy"],
)
def test_a_missing_or_legacy_state_is_answered_by_intake_and_intake_is_stored(
    h: Harness, state: str, reason: str
) -> None:
    """Scenario 5 (R): a participant imported with no state, or PromptPipe's old state."""
    imported = enrolment(
        phone=PHONE, conversation_state=state, source="auto", intervention="habit-coach"
    )
    h.pid = imported.participant_id
    h.append(imported)
    h.script(ScriptedReply.text("Hi! What would you like to work on?"))

    h.text("hello?")

    assert "intake coach" in h.requests[0].messages[0]["content"]
    assert h.data("state.transitioned") == [
        StateTransitioned(from_state=state, to_state="intake", reason=reason, source="flow")
    ]
    assert h.participant()["conversation_state"] == "intake"
    assert h.outbound() == ["Hi! What would you like to work on?"]


# -- tools in the conversation (6-10) --------------------------------------------------------


def test_the_profile_merges_non_empty_values_and_reports_noop_and_the_legacy_name(
    h: Harness,
) -> None:
    """Scenario 6 (R): empty values keep what is saved; the same values again are a NOOP."""
    enrolled(h)
    h.script(
        ScriptedReply.tool_calls([("save_user_profile", {"habit_domain": "walking"})]),
        ScriptedReply.text("Walking it is! When would suit you?"),
    )
    h.text("walking")
    update = {"prompt_anchor": "after coffee", "preferred_time": "9am", "habit_domain": ""}
    h.script(
        ScriptedReply.tool_calls([("save_user_profile", update)]),
        ScriptedReply.tool_calls([("save_user_profile", update)]),
        ScriptedReply.tool_calls([("save_user_profile", {"last_blocker": "busy"})]),
        ScriptedReply.text(TOLD),
    )

    h.text("9am, after coffee, but I'm busy")

    results = tool_results(h)
    assert results[1].startswith("SUCCESS: profile saved (2 field(s) updated")
    assert results[2].startswith("NOOP")
    assert results[3].startswith("SUCCESS: profile saved (1 field(s) updated: last_barrier)")
    told = [m["content"] for m in h.requests[-1].messages if m["role"] == "tool"]
    assert told == results[1:]  # each result went back to the model
    profile = h.participant()["profile"]
    assert profile == {
        "habit_domain": "walking",
        "prompt_anchor": "after coffee",
        "preferred_time": "9am",
        "last_barrier": "busy",
    }
    assert h.outbound()[-1] == TOLD


def test_intake_completes_in_one_turn_with_a_schedule_a_timer_and_the_move_to_feedback(
    h: Harness,
) -> None:
    """Scenario 7 (R): save_user_profile → scheduler(create fixed 09:30) → transition_state."""
    enrolled(h)
    schedule = {
        "action": "create",
        "type": "fixed",
        "fixed_time": "09:30",
        "timezone": "America/Toronto",
    }
    h.script(
        ScriptedReply.tool_calls([("save_user_profile", PROFILE)]),
        ScriptedReply.tool_calls([("scheduler", schedule)]),
        ScriptedReply.tool_calls([("transition_state", {"target_state": "feedback"})]),
        ScriptedReply.text("All set!"),
    )

    h.text("after my morning coffee, at 9:30, because it clears my head")

    (created,) = h.data("schedule.created")
    assert re.fullmatch(r"sched_[0-9a-f]{16}", created.schedule_id)
    (timer,) = h.timers(kind="daily", status="scheduled")
    assert timer["due_at"] == local("09:20")  # 10 minutes' preparation before 09:30 local
    assert h.participant()["conversation_state"] == "feedback"
    assert h.outbound() == [GREETING, "All set!"]
    told = tool_results(h)[1]
    assert "Do not tell the participant the schedule id." in told
    assert "The first prompt is today." in told
    (listed,) = h.api("GET", f"/participants/{h.pid}/timers").get_json()["result"]["schedules"]
    assert listed["fires_at"] == "2026-05-04T13:20:00Z"


def test_a_model_that_never_stops_calling_tools_or_says_nothing_gets_the_fallback(
    h: Harness,
) -> None:
    """Scenario 8 (R, B: an empty answer sends the fallback, never an empty message)."""
    enrolled(h)
    forever = ScriptedReply.tool_calls([("scheduler", {"action": "list"})])
    h.script(*[forever] * 10)

    h.text("hello")

    assert len(h.requests) == 1 + 10
    assert h.outbound()[-1] == intake.MODULE.fallback
    (failed,) = h.data("turn.failed")
    assert failed.reason == "too many tool rounds (10)"
    (not_run,) = h.data("tool.failed")
    assert not_run.error == "not run: the turn reached 10 rounds"
    h.script(ScriptedReply.empty())
    h.text("are you there?")
    assert h.outbound()[-1] == intake.MODULE.fallback
    assert [f.reason for f in h.data("turn.failed")][-1] == "empty reply"
    assert "" not in h.outbound()


def test_tool_errors_name_the_field_go_back_to_the_model_and_the_turn_carries_on(
    h: Harness,
) -> None:
    """Scenario 9 (R, B: the error names the field; a bad transition target is an error), with
    the extra candidate: deleting a schedule by its time is refused with guidance."""
    enrolled(h)
    h.script(
        ScriptedReply.tool_calls(
            [("scheduler", {"action": "create", "type": "fixed", "fixed_time": "25:00"})]
        ),
        ScriptedReply.tool_calls([("transition_state", {"target_state": "PROMPT_GENERATOR"})]),
        ScriptedReply.tool_calls([("scheduler", {"action": "delete", "schedule_id": "09:30"})]),
        ScriptedReply.text("Which time works, say 09:30?"),
    )

    h.text("send it at 25:00")

    errors = [f.error for f in h.data("tool.failed")]
    assert "fixed_time '25:00' is not a 24-hour time HH:MM" in errors[0]
    assert "target_state 'PROMPT_GENERATOR' is not a conversation state" in errors[1]
    assert "looks like a time, not a schedule id" in errors[2]
    told = [m["content"] for m in h.requests[-1].messages if m["role"] == "tool"]
    assert all(t.startswith("Error: ") for t in told) and len(told) == 3
    assert h.participant()["conversation_state"] == "intake"
    assert h.data("state.transitioned") == [] and h.data("schedule.created") == []
    assert h.outbound()[-1] == "Which time works, say 09:30?"
    assert h.data("turn.failed") == []


def test_a_habit_prompt_needs_the_anchor_and_time_and_is_handed_back_not_sent(h: Harness) -> None:
    """Scenario 10 (R): the generator runs only with a complete profile; the tool sends
    nothing, the model's reply does."""
    enrolled(h)
    h.script(
        ScriptedReply.tool_calls([("generate_habit_prompt", {"delivery_mode": "immediate"})]),
        ScriptedReply.text("First, when in your day could it fit?"),
    )
    h.text("give me a prompt")
    (failure,) = h.data("tool.failed")
    assert failure.error.startswith("Failed to generate prompt: profile incomplete: missing ")
    assert "prompt_anchor" in failure.error and "preferred_time" in failure.error
    anchor = {"prompt_anchor": "after coffee", "preferred_time": "9am"}
    h.script(
        ScriptedReply.tool_calls(
            [
                ("save_user_profile", anchor),
                ("generate_habit_prompt", {"delivery_mode": "immediate"}),
            ]
        ),
        ScriptedReply.text(f"“{PROMPT}”"),  # the generator's own call, quoted
        ScriptedReply.text(PROMPT),
    )

    h.text("after coffee at 9am")

    generator = h.requests[-2]
    assert generator.tools == []
    assert generator.messages[0]["content"].startswith("You write one habit prompt")
    assert tool_results(h)[-1] == PROMPT  # unquoted, returned to the model
    purposes = [c.purpose for c in h.data("llm.called")]
    assert purposes[-3:] == ["intake", "generate_habit_prompt", "intake"]
    assert h.outbound() == [GREETING, "First, when in your day could it fit?", PROMPT]
    assert [q.kind for q in h.data("message.queued")] == ["greeting", "reply", "reply"]


# -- the daily cycle (11-19) -------------------------------------------------------------------


def test_the_daily_prompt_goes_out_with_its_questions_and_enters_the_transcript(
    h: Harness,
) -> None:
    """Scenario 11 (R, B: the prompt is part of the transcript the LLM sees next)."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))

    h.until(local("09:20"))

    assert h.outbound()[2:] == [PROMPT, DID_YOU, INTENSITY]
    generator = h.requests[-1]
    assert (
        generator.tools == [] and "their scheduled daily prompt" in generator.messages[0]["content"]
    )
    profile = h.participant()["profile"]
    assert profile["total_prompts"] == 1
    assert profile["last_prompt_at"] == local("09:20").astimezone(UTC).isoformat()
    pending = {t["kind"]: t["due_at"] for t in h.timers(status="scheduled")}
    assert pending == {
        "reminder": local("14:20"),
        "transition": local("09:25"),
        "daily": local("09:20", days=1),
    }
    h.script(ScriptedReply.text("Any short walk counts!"))
    h.advance(timedelta(minutes=1))
    h.text("what counts as a walk?")
    shown = [m["content"] for m in h.requests[-1].messages]
    assert f"[scheduled prompt] {PROMPT}" in shown
    assert f"[question] {DID_YOU}" in shown


def test_a_daily_prompt_without_an_anchor_sends_the_fixed_text_and_raises_an_alert(
    make_harness,
) -> None:
    """Scenario 12 (B, decided: send the fallback and alert); paused participants get nothing."""
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR)
    enrolled(h)
    set_up_habit(h, "09:30", profile=None)
    calls = len(h.requests)

    h.until(local("09:20"))

    assert h.outbound()[2:] == [FALLBACK_TEXT, DID_YOU, INTENSITY]
    assert len(h.requests) == calls  # no generator call without a profile
    (alert,) = h.data("alert.raised")
    assert (alert.kind, alert.severity, alert.rule) == ("tool", "warning", "habit_prompt_fallback")
    assert "missing prompt_anchor, preferred_time" in alert.summary
    assert h.outbound(SUPERVISOR) == []
    paused = h.api("PUT", f"/participants/{h.pid}", {"status": "paused"})
    assert paused.status_code == 200
    h.until(local("09:30", days=1))
    assert h.outbound()[-1] == INTENSITY
    assert [s.reason for s in h.data("timer.skipped")][-1] == "paused"


def test_a_reply_or_a_poll_vote_cancels_the_pending_reminder(h: Harness) -> None:
    """Scenario 13 (R): nothing is sent at 14:20 after a reply at 09:30."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("09:30"))
    h.script(ScriptedReply.text("Brilliant! What helped?"))

    h.text("Done, that was easy")

    reminder = next(t for t in h.timers() if t["kind"] == "reminder")
    assert (reminder["status"], reminder["reason"]) == ("cancelled", "answered")
    (reported,) = h.events("habit.reported")
    assert reported.occurred_at == local("09:30")
    h.script(*generated(PROMPT), ScriptedReply.text("Nice one!"))
    h.until(local("09:30", days=1))
    h.text("Q: Did you do it? A: Done")  # a WhatsApp poll vote
    h.until(local("15:00", days=1))
    assert REMINDER_TEXT not in h.outbound()
    assert [r.done for r in h.data("habit.reported")] == [True, True]
    reasons = [t["reason"] for t in h.timers() if t["kind"] == "reminder"]
    assert reasons == ["answered", "answered"]


def test_without_a_reply_the_reminder_goes_once_and_a_late_reply_is_answered(h: Harness) -> None:
    """Scenario 14 (R): one reminder at 14:20; a reply at 15:00 is an ordinary turn."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))

    h.until(local("15:00"))

    assert h.outbound()[-1] == REMINDER_TEXT
    assert h.outbound().count(REMINDER_TEXT) == 1
    (sent,) = [e for e in h.events("message.queued") if e.data.kind == "reminder"]
    assert sent.occurred_at == local("14:20")
    cancelled = len(h.data("timer.cancelled"))
    h.script(ScriptedReply.text("No worries! What got in the way?"))
    h.text("sorry, busy day")
    assert h.outbound()[-1] == "No worries! What got in the way?"
    assert h.data("turn.failed") == [] and len(h.data("timer.cancelled")) == cancelled


def test_only_the_newest_prompts_reminder_is_sent_even_across_restarts(h: Harness) -> None:
    """Scenario 15 (R, B: no duplicate reminder after a restart)."""
    enrolled(h)
    set_up_habit(h, "09:30")
    add_habit_schedule(h, "10:10")  # a second daily prompt at 10:00
    h.script(*generated(PROMPT, "Before lunch, stretch for a minute."))

    h.until(local("14:50"))

    assert h.outbound()[2:] == [
        PROMPT,
        DID_YOU,
        INTENSITY,
        "Before lunch, stretch for a minute.",
        DID_YOU,
    ]
    first, second = [t for t in h.timers() if t["kind"] == "reminder"]
    assert (first["status"], first["reason"]) == ("skipped", "stale")
    restarted = h.restart(at=local("15:10"))  # down from 14:50 to 15:10: 15:00 was missed
    restarted.settle()
    again = restarted.restart(at=local("15:11"))
    again.settle()
    assert again.outbound().count(REMINDER_TEXT) == 1
    assert again.timers(timer_id=second["timer_id"])[0]["late_seconds"] == 600


def test_the_intensity_question_is_asked_once_per_participant_local_day(h: Harness) -> None:
    """Scenario 16 (R→B): prompts at 19:30 and 20:30 Toronto fall on two UTC dates but one
    local day, so one intensity question; the next local day asks again."""
    assert local("19:30").astimezone(UTC).date() != local("20:30").astimezone(UTC).date()
    enrolled(h)
    set_up_habit(h, "19:40")
    add_habit_schedule(h, "20:40")
    h.script(*generated("One", "Two", "Three"))

    h.until(local("20:31"))
    assert h.outbound()[2:] == ["One", DID_YOU, INTENSITY, "Two", DID_YOU]
    h.until(local("19:31", days=1))

    assert h.outbound()[-3:] == ["Three", DID_YOU, INTENSITY]
    assert [
        q.local_date.isoformat() for q in h.data("question.asked") if q.kind == "intensity"
    ] == [
        "2026-05-04",
        "2026-05-05",
    ]


def test_intensity_answers_over_sms_change_the_level_and_the_next_prompt(h: Harness) -> None:
    """Scenario 17 (R→B): "3", "Increase" and "low" are understood over plain SMS, each
    change is an event, and the generator is asked for the new intensity."""
    enrolled(h)
    set_up_habit(h, "09:30", to_feedback=True)
    h.script(*generated(PROMPT), ScriptedReply.text("Noted."), ScriptedReply.text("Noted."))
    h.until(local("09:20"))

    h.text("3")  # option 3 of the intensity check ("Did you do it?" has only two)
    h.text("Increase")  # no intensity question open any more: changes nothing

    (answered,) = h.data("habit.intensity_answered")
    assert (answered.answer, answered.previous, answered.level) == ("Increase", "normal", "high")
    assert h.participant()["profile"]["intensity"] == "high"
    h.script(*generated("A bigger walk."), ScriptedReply.text("Noted."))
    h.until(local("09:20", days=1))
    assert "Intensity: HIGH" in h.requests[-1].messages[0]["content"]
    assert h.outbound()[-1] == "How's the intensity?\n1. Decrease\n2. Keep current"
    h.text("Increase")  # high + Increase stays high
    h.script(*generated("A tiny walk."), ScriptedReply.text("Noted."))
    h.until(local("09:20", days=2))
    h.text("low")
    levels = [(a.previous, a.level) for a in h.data("habit.intensity_answered")]
    assert levels == [("normal", "high"), ("high", "high"), ("high", "low")]
    changes = [s.changes["intensity"] for s in h.data("profile.saved") if "intensity" in s.changes]
    assert changes == ["high", "low"]


def test_done_counts_a_success_and_still_reaches_the_module(h: Harness) -> None:
    """Scenario 18 (R)."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("09:30"))
    h.script(ScriptedReply.text("Brilliant! What helped today?"))

    h.text("Done")

    assert h.participant()["profile"]["success_count"] == 1
    (reported,) = h.data("habit.reported")
    assert (reported.done, reported.answer) == (True, "Done")
    request = h.requests[-1]
    assert request.messages[-1] == {"role": "user", "content": "Done"}
    assert 'Their answer to "Did you do it?": Done.' in request.messages[0]["content"]
    assert h.outbound()[-1] == "Brilliant! What helped today?"


def test_five_minutes_after_a_prompt_the_conversation_moves_to_feedback_silently(
    h: Harness,
) -> None:
    """Scenario 19 (R): in intake at 09:20, in feedback at 09:25, nothing sent."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("09:24"))
    sent = h.outbound()
    assert h.participant()["conversation_state"] == "intake"

    h.until(local("09:25"))

    assert h.participant()["conversation_state"] == "feedback"
    (moved,) = h.events("state.transitioned")
    assert moved.data == StateTransitioned(
        from_state="intake", to_state="feedback", reason="auto_feedback", source="timer"
    )
    assert moved.occurred_at == local("09:25")
    assert h.outbound() == sent


def test_the_move_to_feedback_is_skipped_when_the_model_moved_first(h: Harness) -> None:
    """Scenario 19, variant (R): transition_state(feedback) at 09:22 makes the 09:25 move stale."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("09:22"))
    h.script(
        ScriptedReply.tool_calls([("transition_state", {"target_state": "feedback"})]),
        ScriptedReply.text("How did it go?"),
    )
    h.text("ok")

    h.until(local("09:30"))

    assert [m.source for m in h.data("state.transitioned")] == ["tool"]
    (auto,) = [t for t in h.timers() if t["kind"] == "transition"]
    assert (auto["status"], auto["reason"]) == ("skipped", "stale")


def test_a_newer_prompt_replaces_the_pending_move_to_feedback(h: Harness) -> None:
    """Scenario 19, variant (R): a prompt at 09:24 cancels the 09:25 move and arms 09:29."""
    enrolled(h)
    set_up_habit(h, "09:30")
    add_habit_schedule(h, "09:34")
    h.script(*generated(PROMPT, "Another one."))

    h.until(local("09:28"))

    first, second = [t for t in h.timers() if t["kind"] == "transition"]
    assert (first["status"], first["reason"]) == ("cancelled", "replaced by a newer habit prompt")
    assert (second["status"], second["due_at"]) == ("scheduled", local("09:29"))
    assert h.participant()["conversation_state"] == "intake"
    h.until(local("09:29"))
    assert h.participant()["conversation_state"] == "feedback"


@pytest.mark.parametrize(
    ("env", "to_feedback"),
    [({}, True), ({"AUTO_FEEDBACK_AFTER_PROMPT_MINUTES": "0"}, False)],
    ids=["already-in-feedback", "turned-off"],
)
def test_no_move_to_feedback_is_armed_when_already_there_or_turned_off(
    make_harness, env: dict[str, str], to_feedback: bool
) -> None:
    """Scenario 19, variants (R): already in feedback, or AUTO_FEEDBACK_AFTER_PROMPT_MINUTES=0."""
    h = make_harness(**env)
    enrolled(h)
    set_up_habit(h, "09:30", to_feedback=to_feedback)
    h.script(*generated(PROMPT))

    h.until(local("09:40"))

    assert [t for t in h.timers() if t["kind"] == "transition"] == []
    assert h.outbound()[2] == PROMPT


# -- transitions, tone, history (20-22) ---------------------------------------------------------


def move(h: Harness, text: str, **arguments: object) -> None:
    """A turn in which the model calls transition_state with `arguments`."""
    h.script(
        ScriptedReply.tool_calls([("transition_state", arguments)]), ScriptedReply.text("Okay.")
    )
    h.text(text)


def test_a_delayed_transition_waits_is_replaced_and_an_immediate_one_cancels_it(
    h: Harness,
) -> None:
    """Scenario 20 (R, B: an immediate move cancels a pending one; fractions are honoured)."""
    enrolled(h)
    h.until(local("10:00"))

    move(h, "ask me later", target_state="feedback", delay_minutes=30)

    assert h.participant()["conversation_state"] == "intake"
    assert tool_results(h)[-1].startswith(
        "Scheduled transition from intake to feedback in 30 minutes, at 2026-05-04 10:30:00 EDT"
    )
    (first,) = h.timers(kind="transition")
    assert first["payload"]["source"] == "transition_state"
    h.until(local("10:05"))
    move(h, "actually sooner", target_state="feedback", delay_minutes=0.5)
    first, second = h.timers(kind="transition")
    assert (first["status"], first["reason"]) == (
        "cancelled",
        "replaced by a newer transition_state",
    )
    assert second["due_at"] == local("10:05") + timedelta(seconds=30)
    h.advance(timedelta(seconds=30))
    assert h.participant()["conversation_state"] == "feedback"
    assert h.events("state.transitioned")[-1].data.source == "timer"
    move(h, "later, back to planning", target_state="intake", delay_minutes=30)
    move(h, "no, now", target_state="intake")
    h.until(local("11:00"))
    assert [t["status"] for t in h.timers(kind="transition")] == ["cancelled", "fired", "cancelled"]
    assert [(m.to_state, m.source) for m in h.data("state.transitioned")] == [
        ("feedback", "timer"),
        ("intake", "tool"),
    ]


def tone(h: Harness, text: str, **arguments: object) -> str:
    """A turn in which the model proposes tone tags; the tool's answer to it."""
    h.script(
        ScriptedReply.tool_calls([("save_user_profile", arguments)]), ScriptedReply.text("Sure.")
    )
    h.text(text)
    return tool_results(h)[-1]


def test_tone_updates_follow_the_rules_and_only_active_tags_reach_the_prompt(h: Harness) -> None:
    """Scenario 21 (R): rate limit, EMA and decay, explicit tags, exclusions, unknown tags."""
    enrolled(h)
    assert "<TONE POLICY>" not in h.requests[0].messages[0]["content"]
    h.append(  # the tone as earlier turns left it
        ProfileSaved(
            changes={
                "tone_tags": ["concise", "emojis_ok"],
                "tone_scores": {"concise": 0.8, "emojis_ok": 0.8},
                "tone_last_updated_at": h.clock.now().isoformat(),
                "tone_update_source": "implicit",
            }
        )
    )
    h.advance(timedelta(minutes=2))

    refused = tone(h, "k", tone_tags=["concise"], tone_update_source="implicit")
    h.advance(timedelta(minutes=2))
    tone(h, "ok", tone_tags=["concise"], tone_update_source="implicit")
    scores = h.participant()["profile"]["tone_scores"]
    explicit = tone(
        h, "no emojis!", tone_tags=["no_emojis", "sarcastic"], tone_update_source="explicit"
    )
    tone(h, "tell me more", tone_tags=["detailed"], tone_update_source="explicit")
    h.script(ScriptedReply.text("Here is more detail."))
    h.text("thanks")

    assert refused.startswith("NOOP") and "limited to one every 3 minutes" in refused
    assert scores == {"concise": 0.83, "emojis_ok": 0.68}
    assert "dropped unknown tone tags: sarcastic" in explicit
    profile = h.participant()["profile"]
    assert profile["tone_tags"] == ["detailed", "no_emojis"]
    assert profile["tone_scores"] == {
        "concise": 0.39,
        "detailed": 1.0,
        "no_emojis": 1.0,
        "emojis_ok": 0.0,
    }
    system = h.requests[-1].messages[0]["content"]
    assert "<TONE POLICY>" in system and "- Do NOT use emojis." in system
    assert "- Be detailed" in system and "- Be concise" not in system


def test_the_llm_sees_at_most_chat_history_limit_earlier_messages_and_nothing_is_trimmed(
    h: Harness,
) -> None:
    """Scenario 22 (R→B): CHAT_HISTORY_LIMIT 50 (default), 10 and 0; the transcript keeps all."""
    enrolled(h)
    for n in range(30):  # 60 messages exchanged after the greeting
        h.script(ScriptedReply.text(f"Reply {n}"))
        h.text(f"Message {n}")
    shown = {}
    harness = h
    for limit in ("50", "10", "0"):
        if limit != "50":
            harness = harness.restart(CHAT_HISTORY_LIMIT=limit)
        harness.script(ScriptedReply.text("Still here."))
        harness.text(f"Limit {limit}?")
        shown[limit] = harness.requests[-1].messages[1:]  # after the system prompt

    assert [len(messages) for messages in shown.values()] == [51, 11, 1]
    assert shown["50"][0] == {"role": "user", "content": "Message 5"}  # 61 earlier, last 50
    assert shown["0"] == [{"role": "user", "content": "Limit 0?"}]
    page = harness.api("GET", f"/participants/{h.pid}/messages?limit=1000").get_json()
    directions = [m["direction"] for m in page["result"]]
    assert (directions.count("inbound"), directions.count("outbound")) == (33, 34)


# -- restarts, idempotency, leaving (23-25) -----------------------------------------------------


def test_after_a_restart_the_overdue_reminder_goes_once_and_tomorrows_prompt_is_on_time(
    h: Harness,
) -> None:
    """Scenario 23 (B): the process stops at 14:00 and restarts at 14:35, after the reminder
    was due (within its 30-minute grace); timers live in the database."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("14:00"))

    restarted = h.restart(at=local("14:35"))
    restarted.settle()
    restarted = restarted.restart(at=local("14:40"))  # and once more
    restarted.settle()

    assert restarted.outbound().count(REMINDER_TEXT) == 1
    (reminder,) = restarted.timers(kind="reminder")
    assert (reminder["status"], reminder["late_seconds"]) == ("fired", 15 * 60)
    listed = restarted.api("GET", f"/participants/{h.pid}/timers").get_json()["result"]
    assert listed["schedules"][0]["fires_at"] == "2026-05-05T13:20:00Z"  # 09:20 Toronto
    restarted.script(*generated("Day two."))
    restarted.until(local("09:21", days=1))
    prompts = [e for e in restarted.events("message.queued") if e.data.kind == "prompt"]
    assert [p.occurred_at for p in prompts] == [local("09:20"), local("09:20", days=1)]


@pytest.mark.parametrize(
    ("env", "reminders"), [({}, 0), ({"TIMER_GRACE": "reminder=none"}, 1)], ids=["default", "none"]
)
def test_a_reminder_hours_overdue_after_a_restart_follows_the_grace_policy(
    h: Harness, env: dict[str, str], reminders: int
) -> None:
    """Scenario 23, Tandem's policy: by default a reminder more than 30 minutes late is recorded
    as missed rather than sent hours late; TIMER_GRACE=reminder=none sends it (once)."""
    enrolled(h)
    set_up_habit(h, "09:30")
    h.script(*generated(PROMPT))
    h.until(local("12:00"))

    restarted = h.restart(at=local("16:20"), **env)
    restarted.settle()

    assert restarted.outbound().count(REMINDER_TEXT) == reminders
    (reminder,) = restarted.timers(kind="reminder")
    assert reminder["status"] == ("fired" if reminders else "skipped")
    assert reminder["late_seconds"] == 2 * 3600


def test_a_redelivered_message_is_answered_once_and_messages_are_taken_in_order(
    h: Harness,
) -> None:
    """Scenario 24 (B): the same MessageSid twice (and a retry later) is one turn; two
    messages 100 ms apart are answered in order, each turn seeing the one before."""
    enrolled(h)
    h.script(ScriptedReply.text("Hello!"))
    h.deliver("hi", sid="SM" + "a" * 32)
    h.deliver("hi", sid="SM" + "a" * 32)
    h.settle()
    h.text("hi", sid="SM" + "a" * 32)  # Twilio retrying after a timeout
    assert len(h.data("message.received")) == 1 and h.outbound() == [GREETING, "Hello!"]
    h.script(ScriptedReply.text("Reply to first"), ScriptedReply.text("Reply to second"))

    h.deliver("first")
    h.clock.advance(timedelta(milliseconds=100))
    h.deliver("second")
    h.settle()

    assert h.outbound()[-2:] == ["Reply to first", "Reply to second"]
    first, second = h.requests[-2:]
    assert first.messages[-1] == {"role": "user", "content": "first"}
    assert "second" not in str(first.messages)
    assert second.messages[-2:] == [
        {"role": "assistant", "content": "Reply to first"},
        {"role": "user", "content": "second"},
    ]


def test_one_participants_busy_queue_does_not_hold_up_another(h: Harness) -> None:
    """Scenario 24 (B): while another worker holds P's queue, Q is still answered."""
    enrolled(h)
    p = h.pid
    h.phone = OTHER_PHONE
    h.script(ScriptedReply.text("Hello Q!"))
    enrolled_q = h.enroll(name="Q", settle=False)
    assert enrolled_q.status_code == 201
    lease = f"participant:{p}"
    assert acquire(h.store.engine, lease, "another-worker", h.clock.now(), timedelta(minutes=5))
    h.settle()  # Q's greeting
    h.deliver("are you there?", sender=PHONE)
    h.script(ScriptedReply.text("Yes, Q."))

    h.text("me too", sender=OTHER_PHONE)

    assert h.outbound(OTHER_PHONE) == ["Hello Q!", "Yes, Q."]
    assert h.outbound(PHONE) == [GREETING]
    release(h.store.engine, lease, "another-worker")
    h.script(ScriptedReply.text("Yes, P."))
    h.settle()
    assert h.outbound(PHONE) == [GREETING, "Yes, P."]


def test_unenrolling_cancels_everything_sends_the_notice_and_nothing_after(h: Harness) -> None:
    """Scenario 25 (R→B): the history is kept, every timer and schedule ends."""
    enrolled(h)
    set_up_habit(h, "09:30")
    notice = h.settings.unregister_notice
    h.script(ScriptedReply.text("A reply that was never sent."))
    h.deliver("one more thing")
    assert h.worker.run_once() == 1  # the reply is queued, not yet sent

    deleted = h.api("DELETE", f"/participants/{h.pid}")
    h.settle()

    assert deleted.status_code == 200
    assert deleted.get_json()["message"].startswith("Participant unenrolled (not deleted)")
    assert deleted.get_json()["result"]["status"] == "unenrolled"
    assert h.outbound()[-1] == notice
    assert "A reply that was never sent." not in h.outbound()
    assert [m.reason for m in h.data("message.suppressed")] == ["unenrolled"]
    again = h.api("DELETE", f"/participants/{h.pid}")
    assert again.status_code == 404
    assert again.get_json()["message"] == "participant_id: Participant is no longer enrolled"
    assert h.timers(status="scheduled") == []
    h.until(local("10:00", days=2))
    h.text("hello?")  # now from an unknown number (UNKNOWN_SENDER_POLICY=ignore)
    assert h.outbound()[-1] == notice and len(h.outbound()) == 3
    assert h.api("GET", f"/participants/{h.pid}").get_json()["result"]["status"] == "unenrolled"


def test_pausing_stops_prompts_and_replies_and_resuming_brings_them_back(h: Harness) -> None:
    """Scenario 25, PUT (B): paused gets nothing, active resumes the daily prompt."""
    enrolled(h)
    set_up_habit(h, "09:30")
    assert h.api("PUT", f"/participants/{h.pid}", {"status": "paused"}).status_code == 200
    h.until(local("10:00"))
    h.text("hello?")
    assert h.outbound() == [GREETING, ALL_SET]
    assert h.data("work.completed")[-1].skipped == "paused"

    assert h.api("PUT", f"/participants/{h.pid}", {"status": "active"}).status_code == 200
    h.script(*generated(PROMPT))
    h.until(local("09:21", days=1))

    assert h.outbound()[2:] == [PROMPT, DID_YOU, INTENSITY]
    skipped = [t for t in h.timers() if t["kind"] == "daily" and t["status"] == "skipped"]
    assert [t["reason"] for t in skipped] == ["paused"]
