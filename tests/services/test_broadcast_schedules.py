"""A study's declared broadcasts made on their schedule: each occurrence once (an ordinary
broadcast to the declared arm, at the local time on its date), none outside start and end, and
one that cannot be made (nobody in the arm) or was missed recorded with an operator alert while
the next occurrence is made as planned."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from bot.services import broadcast_schedules, broadcasts
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.broadcasts import BroadcastOccurrenceFailed
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.studies.catalogue import STUDIES, StudyCatalogue
from tests.services.broadcasting import CATALOGUE, enroll

SATURDAY = datetime(2027, 1, 2, 12, 0, tzinfo=UTC)
SUNDAY = datetime(2027, 1, 3, 0, 30, tzinfo=UTC)  # Monday 4 January's window is open
MONDAY = date(2027, 1, 4)


def allocate(store: EventStore, n: int, arm: str) -> str:
    pid = enroll(store, n, intervention="walk-control" if arm == "control" else "habit-coach")
    allocated = ParticipantAllocated(
        study="walk-pilot",
        arm=arm,
        method="simple",
        sequence="s1",
        number=n,
        probabilities={"coach": 0.5, "control": 0.5},
        conditional={"coach": 0.5, "control": 0.5},
        seed="test",
    )
    store.append(participant_stream(pid), [allocated])
    return pid


def studies(tmp_path: Path, extra: str = "") -> StudyCatalogue:
    folder = tmp_path / "studies" / "walk-pilot"
    folder.mkdir(parents=True)
    text = (STUDIES / "walk-pilot" / "study.yaml").read_text()
    (folder / "study.yaml").write_text(text.replace('      time: "09:00"\n', extra, 1))
    return StudyCatalogue(tmp_path / "studies", CATALOGUE)


def failures(store: EventStore) -> list[tuple[str, str]]:
    return [
        (e.data.occurrence, e.data.reason)
        for e in store.read_all(event_types=[BroadcastOccurrenceFailed.event_type])
        if isinstance(e.data, BroadcastOccurrenceFailed)
    ]


def operator_alerts(store: EventStore) -> list[str]:
    return [
        e.data.summary
        for e in store.load(SYSTEM_STREAM)
        if isinstance(e.data, AlertRaised) and e.data.kind == "broadcast"
    ]


def test_each_weekly_occurrence_is_made_once_for_the_declared_arm_at_local_time(
    store: EventStore, tmp_path: Path
) -> None:
    control = [allocate(store, n, "control") for n in range(3)]
    allocate(store, 9, "coach")
    catalogue = studies(tmp_path, '      time: "09:00"\n')
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SATURDAY) == []  # not open yet
    made = broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY)
    assert made == ["made walk-pilot/weekly-tip@2027-01-04"]
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY + timedelta(hours=5)) == []
    [row] = broadcasts.listing(store)
    assert row["schedule"] == "walk-pilot/weekly-tip@2027-01-04"
    assert row["filter"]["arm"] == "control" and row["created_by"] == "study:walk-pilot"
    due = {r["participant_id"] for r in broadcasts.recipients(store, row["broadcast_id"])}
    assert due == set(control)
    [planned] = {
        e.data.due_at
        for e in store.load(f"broadcast:{row['broadcast_id']}")
        if e.event_type == "broadcast.planned"
    }
    assert planned == datetime(2027, 1, 4, 14, 0, tzinfo=UTC)  # 09:00 in Toronto
    next_week = broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY + timedelta(days=7))
    assert next_week == ["made walk-pilot/weekly-tip@2027-01-11"]
    assert failures(store) == []


def test_an_occurrence_that_reaches_nobody_is_an_event_and_an_operator_alert_and_the_chain_goes_on(
    store: EventStore, tmp_path: Path
) -> None:
    catalogue = studies(tmp_path, '      time: "09:00"\n')
    allocate(store, 9, "coach")  # nobody in the control arm yet
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY) == [
        "failed walk-pilot/weekly-tip@2027-01-04"
    ]
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY) == []  # recorded once
    [(occurrence, reason)] = failures(store)
    assert occurrence == "2027-01-04" and "no participant matches" in reason
    [alert] = operator_alerts(store)
    assert "walk-pilot/weekly-tip" in alert and "2027-01-04" in alert
    allocate(store, 1, "control")
    later = SUNDAY + timedelta(days=7)
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, later) == [
        "made walk-pilot/weekly-tip@2027-01-11"
    ]


def test_an_occurrence_whose_window_closed_unmade_is_recorded_as_missed(
    store: EventStore, tmp_path: Path
) -> None:
    catalogue = studies(tmp_path, '      time: "09:00"\n')
    allocate(store, 1, "control")
    broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY)
    three_weeks = SUNDAY + timedelta(days=21)  # the 11th and 18th passed with nothing running
    done = broadcast_schedules.tick(store, CATALOGUE, catalogue, three_weeks)
    assert done == [
        "failed walk-pilot/weekly-tip@2027-01-11",
        "failed walk-pilot/weekly-tip@2027-01-18",
        "made walk-pilot/weekly-tip@2027-01-25",
    ]
    assert all(reason.startswith("missed") for _, reason in failures(store))
    assert len(operator_alerts(store)) == 2


def test_no_occurrence_is_made_before_start_or_after_end(store: EventStore, tmp_path: Path) -> None:
    bounded = '      time: "09:00"\n    start: 2027-01-10\n    end: 2027-01-12\n'
    catalogue = studies(tmp_path, bounded)
    allocate(store, 1, "control")
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY) == []
    week = SUNDAY + timedelta(days=7)
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, week) == [
        "made walk-pilot/weekly-tip@2027-01-11"
    ]
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, week + timedelta(days=7)) == []
    assert failures(store) == []


def test_a_study_nobody_was_allocated_in_makes_nothing_and_alerts_nobody(
    store: EventStore, tmp_path: Path
) -> None:
    catalogue = studies(tmp_path, '      time: "09:00"\n')
    enroll(store, 1, intervention="walk-control")  # enrolled outside the study
    assert broadcast_schedules.tick(store, CATALOGUE, catalogue, SUNDAY) == []
    assert failures(store) == [] and operator_alerts(store) == []
    assert broadcasts.listing(store) == []
