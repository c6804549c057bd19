"""scheduler: validation, create (fixed, random, prep, DST), dedupe, replace, list, delete."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from bot.conversation.tooling import ToolOutcome
from bot.store.event_types.schedules import ScheduleCreated, ScheduleDeleted
from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.timers.schedules import create_daily, next_occurrence
from tests.tools import NOW, context, participant, stream, timer_rows
from tools.scheduler import Scheduler, run

TORONTO = ZoneInfo("America/Toronto")


def _call(
    *earlier: ToolOutcome | list,
    at: datetime = NOW,
    who: dict | None = None,
    options: dict | None = None,
    **arguments: Any,
) -> ToolOutcome:
    """Run the scheduler after the events of `earlier` outcomes (or event lists) were recorded."""
    recorded = [
        e for item in earlier for e in (item.events if isinstance(item, ToolOutcome) else item)
    ]
    return run(
        Scheduler.model_validate(arguments),
        context(who, at, stream(*recorded), timer_rows(recorded), options),
    )


def _fixed(hh_mm: str, **kwargs: Any) -> ToolOutcome:
    return _call(action="create", type="fixed", fixed_time=hh_mm, **kwargs)


def _created(outcome: ToolOutcome) -> tuple[ScheduleCreated, TimerScheduled]:
    (schedule,) = [e for e in outcome.events if isinstance(e, ScheduleCreated)]
    (timer,) = [e for e in outcome.events if isinstance(e, TimerScheduled)]
    return schedule, timer


def _invalid(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        Scheduler.model_validate(arguments)


# validation


def test_a_time_that_is_not_24_hour_hh_mm_is_refused_naming_the_field() -> None:
    _invalid(
        {"action": "create", "type": "fixed", "fixed_time": "25:00"},
        "fixed_time '25:00' is not a 24-hour time HH:MM such as '09:30'",
    )


def test_create_without_a_type_is_refused_naming_both_types() -> None:
    _invalid({"action": "create"}, "type is required for action 'create': 'fixed' (with")


def test_a_fixed_schedule_without_fixed_time_is_refused() -> None:
    _invalid({"action": "create", "type": "fixed"}, "fixed_time is required for type 'fixed'")


def test_a_random_schedule_without_its_window_is_refused() -> None:
    _invalid(
        {"action": "create", "type": "random"},
        "random_start_time and random_end_time are required for type 'random'",
    )


def test_a_window_ending_before_it_starts_is_refused() -> None:
    _invalid(
        {
            "action": "create",
            "type": "random",
            "random_start_time": "22:00",
            "random_end_time": "06:00",
        },
        "random_end_time (06:00) must be after random_start_time (22:00): a window lies "
        "within one day (windows across midnight are not supported)",
    )


def test_window_times_given_for_a_fixed_schedule_are_refused() -> None:
    _invalid(
        {"action": "create", "type": "fixed", "fixed_time": "09:00", "random_end_time": "10:00"},
        "random_end_time must be null for type 'fixed'",
    )


def test_delete_without_a_schedule_id_is_refused_pointing_to_list() -> None:
    _invalid(
        {"action": "delete"},
        "schedule_id is required for action 'delete'; call the scheduler with action 'list'",
    )


def test_an_unknown_timezone_is_refused() -> None:
    _invalid({"action": "list", "timezone": "Mars/Base"}, "timezone 'Mars/Base' is not an IANA")


def test_an_unknown_action_is_refused_naming_the_actions() -> None:
    _invalid({"action": "pause"}, "Input should be 'create', 'list' or 'delete'")


def test_short_times_and_upper_case_words_are_accepted() -> None:
    args = Scheduler.model_validate({"action": "CREATE", "type": "Fixed", "fixed_time": "9:30"})
    assert (args.action, args.type, args.fixed_time) == ("create", "fixed", "09:30")


# create


def test_a_fixed_schedule_sends_the_prompt_prep_minutes_before_the_habit_time() -> None:
    schedule, timer = _created(_fixed("09:30"))
    assert schedule.when == "09:20" and schedule.kind == "daily"
    assert timer.due_at.astimezone(TORONTO).time() == time(9, 20)


def test_the_schedule_records_its_purpose_type_habit_time_and_prep() -> None:
    schedule, _ = _created(_fixed("09:30"))
    assert schedule.payload == {
        "purpose": "habit_prompt",
        "type": "fixed",
        "habit_time": "09:30",
        "prep_minutes": 10,
        "text": "Daily habit reminder - it's time for your healthy habit!",
    }
    assert re.fullmatch(r"sched_[0-9a-f]{16}", schedule.schedule_id)


def test_the_prep_time_comes_from_the_study_options() -> None:
    schedule, _ = _created(_fixed("09:30", options={"prep_minutes": 30}))
    assert schedule.when == "09:00" and schedule.payload["prep_minutes"] == 30


def test_a_bad_prep_option_fails_naming_the_option() -> None:
    outcome = _fixed("09:30", options={"prep_minutes": "ten"})
    assert not outcome.ok and outcome.events == []
    assert outcome.message == (
        "scheduler create failed: the study option prep_minutes must be a whole number from 0 "
        "to 720, got 'ten'"
    )


def test_a_slot_still_ahead_today_is_first_sent_today() -> None:
    outcome = _fixed("17:00")
    assert _created(outcome)[1].due_at == datetime(2026, 5, 4, 20, 50, tzinfo=UTC)
    assert "The first prompt is today." in outcome.message


def test_a_slot_already_past_today_is_first_sent_tomorrow() -> None:
    outcome = _fixed("09:30")
    assert _created(outcome)[1].due_at == datetime(2026, 5, 5, 13, 20, tzinfo=UTC)
    assert "The first prompt is tomorrow." in outcome.message


def test_the_first_prompt_after_spring_forward_keeps_the_local_time() -> None:
    saturday = datetime(2026, 3, 7, 15, 0, tzinfo=UTC)  # 10:00 EST; DST starts Sunday 02:00
    outcome = _fixed("09:30", at=saturday)
    assert _created(outcome)[1].due_at == datetime(2026, 3, 8, 13, 20, tzinfo=UTC)
    assert "Next prompt: Sun 2026-03-08 09:20 EDT (2026-03-08 13:20 UTC)." in outcome.message


def test_the_prompt_time_follows_the_participants_timezone() -> None:
    _, timer = _created(_fixed("09:30", who=participant(timezone="Asia/Tokyo")))
    assert timer.due_at.astimezone(ZoneInfo("Asia/Tokyo")).time() == time(9, 20)


def test_the_participants_own_timezone_may_be_named() -> None:
    assert _fixed("09:30", timezone="America/Toronto").ok


def test_another_timezone_than_the_participants_is_refused() -> None:
    outcome = _fixed("09:30", timezone="Europe/Paris")
    assert not outcome.ok and outcome.events == []
    assert outcome.message.startswith(
        "scheduler create failed: timezone Europe/Paris differs from the participant's "
        "timezone America/Toronto"
    )


def test_a_random_window_is_shifted_by_the_prep_time() -> None:
    outcome = _call(
        action="create", type="random", random_start_time="09:00", random_end_time="11:00"
    )
    assert _created(outcome)[0].when == "08:50-10:50"


def test_a_random_occurrence_records_its_draw_and_lies_where_the_draw_puts_it() -> None:
    outcome = _call(
        action="create", type="random", random_start_time="09:00", random_end_time="11:00"
    )
    _, timer = _created(outcome)
    draw = timer.payload["draw"]
    assert 0 <= draw < 1
    day = date.fromisoformat(timer.payload["local_date"])  # today or tomorrow, by the draw
    start = datetime.combine(day, time(8, 50), tzinfo=TORONTO)
    assert abs(timer.due_at - (start + draw * timedelta(hours=2))) < timedelta(seconds=1)


def test_each_day_of_a_random_schedule_has_its_own_recorded_draw() -> None:
    outcome = _call(
        action="create", type="random", random_start_time="09:00", random_end_time="11:00"
    )
    _, first = _created(outcome)
    (row,) = timer_rows([first])
    second = next_occurrence(row, participant(), first.due_at)
    following = date.fromisoformat(first.payload["local_date"]) + timedelta(days=1)
    assert second is not None and second.payload["local_date"] == following.isoformat()
    assert second.payload["draw"] != first.payload["draw"]


def test_a_window_near_midnight_may_cross_it_once_shifted_by_the_prep_time() -> None:
    outcome = _call(
        action="create", type="random", random_start_time="00:00", random_end_time="01:00"
    )
    assert _created(outcome)[0].when == "23:50-00:50"


def test_creating_the_same_schedule_again_changes_nothing() -> None:
    outcome = _fixed("09:30")
    again = _call(outcome, action="create", type="fixed", fixed_time="09:30")
    assert again.ok and again.events == []
    assert again.message.startswith("Already scheduled, nothing changed: sched_")


def test_a_new_schedule_replaces_the_existing_one_and_says_so() -> None:
    old = _fixed("08:00")
    old_schedule, old_timer = _created(old)
    new = _call(old, action="create", type="fixed", fixed_time="09:30")
    assert new.events[:2] == [
        ScheduleDeleted(schedule_id=old_schedule.schedule_id, reason="replaced"),
        TimerCancelled(timer_id=old_timer.timer_id, reason="schedule replaced"),
    ]
    assert [type(e) for e in new.events[2:]] == [ScheduleCreated, TimerScheduled]
    assert new.message.startswith(
        f"Replaced the previous daily prompt {old_schedule.schedule_id} (habit time 08:00 "
        "America/Toronto, prompt sent 10 minutes before). Created daily prompt sched_"
    )


def test_an_intervention_allowing_several_schedules_keeps_the_existing_one() -> None:
    old = _fixed("08:00")
    new = _call(
        old, options={"max_schedules": 2}, action="create", type="fixed", fixed_time="18:00"
    )
    assert [type(e) for e in new.events] == [ScheduleCreated, TimerScheduled]


# list


def test_list_without_schedules_says_so() -> None:
    outcome = _call(action="list")
    assert outcome.message == "No daily prompt is scheduled. Use action 'create' to set one."


def test_list_shows_the_next_real_prompt_in_local_time_and_utc() -> None:
    saturday = datetime(2026, 3, 7, 15, 0, tzinfo=UTC)
    created = _fixed("09:30", at=saturday)
    schedule, _ = _created(created)
    outcome = _call(created, at=saturday, action="list")
    assert outcome.message.splitlines() == [
        "Daily prompts (1):",
        f"1. {schedule.schedule_id}: habit time 09:30 America/Toronto, prompt sent 10 minutes "
        "before. Next prompt: Sun 2026-03-08 09:20 EDT (2026-03-08 13:20 UTC).",
        "Do not tell the participant the schedule id.",
    ]


def test_list_describes_a_random_window() -> None:
    created = _call(
        action="create", type="random", random_start_time="09:00", random_end_time="11:00"
    )
    outcome = _call(created, action="list")
    assert "habit time drawn at random each day between 09:00 and 11:00 America/Toronto" in (
        outcome.message
    )


def test_list_shows_a_prompt_in_quiet_hours_moved_to_their_end() -> None:
    created = _fixed("08:05")
    outcome = _call(created, options={"quiet_hours": "22:00-08:00"}, action="list")
    assert (
        "Next prompt: Tue 2026-05-05 08:00 EDT (2026-05-05 12:00 UTC), deferred to the end of "
        "quiet hours." in outcome.message
    )


def test_list_shows_that_nothing_is_sent_while_the_participant_is_paused() -> None:
    created = _fixed("09:30")
    outcome = _call(created, who=participant(status="paused"), action="list")
    assert "Next prompt: none (suppressed while the participant is paused)." in outcome.message


def test_list_leaves_out_the_study_protocols_schedules() -> None:
    protocol = create_daily(participant(), "20:00", "measurement", {"text": "Mood 1-5?"}, NOW)
    assert _call(protocol, action="list").message.startswith("No daily prompt is scheduled.")


# delete


def test_delete_removes_the_schedule_and_cancels_its_pending_prompt() -> None:
    created = _fixed("09:30")
    schedule, timer = _created(created)
    outcome = _call(created, action="delete", schedule_id=schedule.schedule_id)
    assert outcome.ok
    assert outcome.events == [
        ScheduleDeleted(schedule_id=schedule.schedule_id),
        TimerCancelled(timer_id=timer.timer_id, reason="schedule deleted"),
    ]
    assert outcome.message == (
        f"Deleted daily prompt {schedule.schedule_id} (habit time 09:30 America/Toronto, prompt "
        "sent 10 minutes before). No more prompts will be sent for it."
    )


def test_deleting_an_unknown_id_fails_pointing_to_list() -> None:
    outcome = _call(_fixed("09:30"), action="delete", schedule_id="sched_0000000000000000")
    assert not outcome.ok and outcome.events == []
    assert outcome.message == (
        "scheduler delete failed: no schedule with id 'sched_0000000000000000'; call the "
        "scheduler with action 'list' to see the ids"
    )


def test_deleting_by_a_time_instead_of_an_id_fails_with_a_hint() -> None:
    outcome = _call(_fixed("09:30"), action="delete", schedule_id="09:30")
    assert not outcome.ok
    assert outcome.message.startswith(
        "scheduler delete failed: '09:30' looks like a time, not a schedule id"
    )


def test_a_study_protocol_schedule_cannot_be_deleted() -> None:
    protocol = create_daily(participant(), "20:00", "measurement", {"text": "Mood?"}, NOW)
    outcome = _call(protocol, action="delete", schedule_id=protocol[0].schedule_id)
    assert not outcome.ok and outcome.events == []
    assert "is part of the study protocol, not a daily habit prompt" in outcome.message
