"""A burst of due timers fires in one transaction, each timer still decided and recorded once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import event

from bot.store.event_types.participants import ParticipantStatusChanged
from bot.timers import one_shot
from bot.timers.firing import fire_many
from tests.timers.conftest import Harness


def _due_now(harness: Harness, person: dict, count: int) -> list[str]:
    due = harness.clock.now() + timedelta(minutes=1)
    made = [one_shot.scheduled(person, "at", due, payload={"text": "hi"}) for _ in range(count)]
    harness.append(person["participant_id"], made)
    return [t.timer_id for t in made]


def _commits(harness: Harness, run: Any) -> int:
    seen: list[int] = []

    def counted(_conn: Any) -> None:
        seen.append(1)

    event.listen(harness.store.engine, "commit", counted)
    try:
        run()
    finally:
        event.remove(harness.store.engine, "commit", counted)
    return len(seen)


def test_a_burst_of_due_timers_is_recorded_in_one_commit(harness: Harness) -> None:
    people = [harness.enroll() for _ in range(3)]
    ids = [t for person in people for t in _due_now(harness, person, 4)]
    harness.clock.advance(timedelta(minutes=1))
    decisions: list = []
    commits = _commits(harness, lambda: decisions.extend(harness.fire()))
    assert commits == 1
    assert sorted(d.events[0].timer_id for d in decisions) == sorted(ids)
    assert {d.outcome for d in decisions} == {"fired"}
    for person in people:
        fired = harness.events(person["participant_id"], "timer.fired")
        assert len(fired) == 4
    assert sorted(w["ref"] for w in harness.pending_work()) == sorted(ids)


def test_firing_a_batch_again_records_nothing(harness: Harness) -> None:
    person = harness.enroll()
    ids = _due_now(harness, person, 3)
    harness.clock.advance(timedelta(minutes=1))
    first = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    again = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [d.outcome for d in first] == ["fired"] * 3
    assert [d.outcome for d in again] == ["none"] * 3
    assert len(harness.events(person["participant_id"], "timer.fired")) == 3


def test_each_timer_in_a_batch_is_decided_on_its_own_participant(harness: Harness) -> None:
    active, paused = harness.enroll(), harness.enroll()
    harness.append(paused["participant_id"], [ParticipantStatusChanged(status="paused")])
    ids = _due_now(harness, active, 1) + _due_now(harness, paused, 1)
    harness.clock.advance(timedelta(minutes=1))
    decisions = fire_many(harness.store, ids, harness.clock.now(), harness.policy)
    assert [(d.outcome, d.reason) for d in decisions] == [("fired", None), ("skipped", "paused")]
