"""`tandem timers list|cancel`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from click.testing import CliRunner, Result

from bot.cli import timers as _commands  # noqa: F401  (registers the commands)
from bot.cli.root import cli
from bot.timers import one_shot
from bot.timers.schedules import create_daily
from tests.conftest import TEST_MASTER_KEY
from tests.timers.conftest import Harness


def tandem(database_url: str, *args: str) -> Result:
    return CliRunner().invoke(
        cli,
        ["timers", *args],
        env={"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY},
    )


def test_list_shows_a_participants_timers_filtered_by_status(
    harness: Harness, database_url: str
) -> None:
    person, other = harness.enroll(), harness.enroll()
    soon = one_shot.at(person, harness.clock.now() + timedelta(hours=1), "hi")
    harness.append(person["participant_id"], [soon])
    harness.append(other["participant_id"], [one_shot.at(other, harness.clock.now(), "hi")])
    result = tandem(database_url, "list", "--participant", person["participant_id"])
    assert result.exit_code == 0, result.output
    (line,) = [row for row in result.output.splitlines() if soon.timer_id in row]
    assert "scheduled" in line and other["participant_id"] not in result.output
    none = tandem(database_url, "list", "--status", "fired", "--json")
    assert none.exit_code == 1 and "no timers match" in none.output  # said, not silent


def test_cancel_records_who_cancelled_and_the_timer_never_fires(
    harness: Harness, database_url: str
) -> None:
    person = harness.enroll()
    timer = one_shot.at(person, harness.clock.now() + timedelta(minutes=5), "hi")
    harness.append(person["participant_id"], [timer])
    result = tandem(database_url, "cancel", timer.timer_id, "--reason", "typo")
    assert result.exit_code == 0, result.output
    (cancelled,) = harness.events(person["participant_id"], "timer.cancelled")
    assert (cancelled.data.reason, cancelled.meta["actor"]) == ("typo", "cli")
    harness.clock.advance(timedelta(hours=1))
    assert harness.fire() == []


def test_cancel_refuses_a_timer_that_already_fired(harness: Harness, database_url: str) -> None:
    person = harness.enroll()
    timer = one_shot.at(person, harness.clock.now(), "hi")
    harness.append(person["participant_id"], [timer])
    harness.fire()
    result = tandem(database_url, "cancel", timer.timer_id)
    assert result.exit_code == 1
    assert "is fired; only scheduled timers can be cancelled" in result.output


def test_cancelling_one_daily_occurrence_keeps_the_schedule_going(
    harness: Harness, database_url: str
) -> None:
    harness.clock.set(datetime.now(UTC))  # the command runs on the wall clock
    person = harness.enroll(timezone="UTC")
    daily = create_daily(person, "09:00", "daily", {"text": "Hi"}, harness.clock.now())
    harness.append(person["participant_id"], daily)
    assert tandem(database_url, "cancel", daily[1].timer_id).exit_code == 0
    (nxt,) = harness.timers(person["participant_id"], "scheduled")
    assert nxt["due_at"] == daily[1].due_at + timedelta(days=1)


def test_cancelling_with_whole_schedule_deletes_the_schedule(
    harness: Harness, database_url: str
) -> None:
    person = harness.enroll(timezone="UTC")
    daily = create_daily(person, "09:00", "daily", {"text": "Hi"}, harness.clock.now())
    harness.append(person["participant_id"], daily)
    assert tandem(database_url, "cancel", daily[1].timer_id, "--whole-schedule").exit_code == 0
    assert harness.timers(person["participant_id"], "scheduled") == []
    assert len(harness.events(person["participant_id"], "schedule.deleted")) == 1
