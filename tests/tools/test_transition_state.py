"""transition_state: validation, immediate and delayed moves, replacing pending ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from bot.store.event_types.conversation import StateTransitioned
from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.timers.one_shot import transition
from tests.tools import NOW, context, participant, timer_rows
from tools.transition_state import TransitionState, run


def _run(pending: list | None = None, who: dict | None = None, **arguments: object):
    args = TransitionState.model_validate(arguments)
    return run(args, context(who=who, pending=pending))


def _pending_delayed(to_state: str = "feedback", minutes: float = 30) -> list[dict]:
    first = _run(target_state=to_state, delay_minutes=minutes)
    return timer_rows(first.events)


def test_an_unknown_target_state_is_refused_naming_the_known_states() -> None:
    with pytest.raises(
        ValidationError,
        match="target_state 'PROMPT_GENERATOR' is not a "
        "conversation state; use one of: intake, feedback",
    ):
        TransitionState.model_validate({"target_state": "PROMPT_GENERATOR"})


def test_target_state_names_are_accepted_in_any_case() -> None:
    assert TransitionState.model_validate({"target_state": " FEEDBACK"}).target_state == "feedback"


@pytest.mark.parametrize("delay", [-1, float("inf"), 7 * 24 * 60 + 1])
def test_a_delay_outside_zero_to_seven_days_is_refused_with_the_rule(delay: float) -> None:
    with pytest.raises(ValidationError, match="delay_minutes must be a number from 0 to 10080"):
        TransitionState.model_validate({"target_state": "feedback", "delay_minutes": delay})


def test_unknown_arguments_are_refused() -> None:
    with pytest.raises(ValidationError, match="participant_id"):
        TransitionState.model_validate({"target_state": "feedback", "participant_id": "p2"})


def test_an_immediate_transition_records_the_move_from_the_current_state() -> None:
    outcome = _run(target_state="feedback", reason="intake done")
    assert outcome.ok
    assert outcome.events == [
        StateTransitioned(from_state="intake", to_state="feedback", reason="intake done")
    ]
    assert outcome.message == "Conversation state transitioned from intake to feedback."


def test_a_zero_delay_is_an_immediate_transition() -> None:
    outcome = _run(target_state="feedback", delay_minutes=0)
    assert [type(e) for e in outcome.events] == [StateTransitioned]


def test_an_immediate_transition_cancels_a_pending_delayed_one() -> None:
    pending = _pending_delayed("feedback")
    outcome = _run(pending, target_state="feedback")
    assert outcome.events[1:] == [
        TimerCancelled(
            timer_id=pending[0]["timer_id"], reason="replaced by a newer transition_state"
        )
    ]
    assert "Cancelled the pending transition to feedback due at 2026-05-04 10:30:00 EDT" in (
        outcome.message
    )


def test_a_transition_timer_set_by_other_code_is_left_alone() -> None:
    auto = transition(participant(), "feedback", timedelta(minutes=5), NOW, "auto feedback")
    outcome = _run(timer_rows([auto]), target_state="feedback")
    assert not any(isinstance(e, TimerCancelled) for e in outcome.events)


def test_a_transition_to_the_current_state_changes_nothing_and_says_so() -> None:
    outcome = _run(target_state="intake")
    assert outcome.ok and outcome.events == []
    assert outcome.message == "Already in intake; no change."


def test_a_transition_to_the_current_state_cancels_a_pending_delayed_one() -> None:
    pending = _pending_delayed("feedback")
    outcome = _run(pending, target_state="intake")
    assert [type(e) for e in outcome.events] == [TimerCancelled]


def test_fractional_minutes_are_honoured() -> None:
    (timer,) = _run(target_state="feedback", delay_minutes=0.5).events
    assert isinstance(timer, TimerScheduled)
    assert timer.due_at == NOW + timedelta(seconds=30)


def test_a_delayed_transition_schedules_a_transition_timer_scoped_to_where_the_talk_is() -> None:
    (timer,) = _run(target_state="feedback", delay_minutes=30, reason="after the try").events
    assert isinstance(timer, TimerScheduled)
    assert timer.kind == "transition"
    assert timer.scope == "intake/"
    assert timer.payload == {
        "to_state": "feedback",
        "reason": "after the try",
        "source": "transition_state",
    }


def test_a_delayed_transition_says_when_in_local_time_and_utc() -> None:
    outcome = _run(target_state="feedback", delay_minutes=30)
    assert outcome.message.startswith(
        "Scheduled transition from intake to feedback in 30 minutes, at "
        "2026-05-04 10:30:00 EDT (14:30:00 UTC)."
    )


def test_a_delayed_transition_replaces_the_pending_one() -> None:
    pending = _pending_delayed("feedback", 30)
    outcome = _run(pending, target_state="feedback", delay_minutes=60)
    cancel, timer = outcome.events
    assert isinstance(cancel, TimerCancelled) and cancel.timer_id == pending[0]["timer_id"]
    assert isinstance(timer, TimerScheduled) and timer.due_at == NOW + timedelta(hours=1)


def test_a_participant_without_a_state_is_reported_as_such() -> None:
    outcome = _run(who=participant(conversation_state=None), target_state="intake")
    assert outcome.events == [StateTransitioned(from_state=None, to_state="intake")]
    assert outcome.message == "Conversation state transitioned from no state to intake."
