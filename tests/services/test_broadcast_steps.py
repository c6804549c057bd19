"""Broadcasts that start a step: the step checked in every recipient's intervention (refused
naming it, dry run too), three samples of what the step would send, and each recipient moved
to the step by an ordinary turn of the worker (step.entered, then the step's message tagged
with the broadcast), once, or held with the reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.core.localtime import parse_quiet_hours
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.services import broadcasts
from bot.services.broadcast_sending import QuietRules
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.event_types import ParticipantOptedOut
from bot.store.event_types.participants import ParticipantWithdrawn
from bot.store.event_types.takeover import TakeoverStarted
from bot.store.events import participant_stream
from tests.services.broadcasting import CATALOGUE, enroll, settle

TIP = "This week: when you take a phone call, stand up and walk while you talk."


def step_broadcast(store: EventStore, clock: FakeClock, **request: Any) -> broadcasts.Planned:
    body = {"step": "tip", "filter": {"intervention": "walk-control"}, **request}
    return broadcasts.create(store, CATALOGUE, body, actor="test", now=clock.now())


def control(store: EventStore, n: int, **changes: Any) -> str:
    return enroll(store, n, intervention="walk-control", name=f"P{n}", **changes)


def drain(database_url: str, store: EventStore, clock: FakeClock) -> None:
    """Run every due turn with the real handler (no LLM configured: walk-control needs none)."""
    settings = load_settings({"DATABASE_URL": database_url}, env_file=None)
    services = build_services(settings, clock=clock, store=store)
    worker = Worker(services, build_handler(services), "test")
    while worker.run_once():
        pass


def types_of(store: EventStore, pid: str) -> list[str]:
    return [e.event_type for e in store.load(participant_stream(pid))]


def queued(store: EventStore, pid: str) -> list[dict[str, Any]]:
    return [
        e.data.model_dump()
        for e in store.load(participant_stream(pid))
        if e.event_type == "message.queued"
    ]


def test_an_unknown_step_is_refused_naming_it_dry_run_too(
    store: EventStore, clock: FakeClock
) -> None:
    control(store, 1)
    for dry_run in (True, False):
        with pytest.raises(Refused, match="no step 'tips' in walk-control") as refused:
            broadcasts.create(
                store,
                CATALOGUE,
                {"step": "tips", "filter": {"intervention": "walk-control"}},
                actor="test",
                now=clock.now(),
                dry_run=dry_run,
            )
        assert refused.value.field == "step" and "goodbye, tip, welcome" in str(refused.value)
    assert broadcasts.listing(store) == []


def test_a_step_one_recipients_intervention_lacks_is_refused_naming_it(
    store: EventStore, clock: FakeClock
) -> None:
    control(store, 1)
    enroll(store, 2)  # habit-coach: a module, no steps
    with pytest.raises(Refused, match="no step 'tip' in habit-coach") as refused:
        broadcasts.create(
            store, CATALOGUE, {"step": "tip"}, actor="t", now=clock.now(), dry_run=True
        )
    assert "walk-control" not in str(refused.value)


def test_a_message_and_a_step_together_or_a_template_with_a_step_are_refused(
    store: EventStore, clock: FakeClock
) -> None:
    control(store, 1)
    with pytest.raises(Refused, match="not both"):
        step_broadcast(store, clock, message="Hi")
    with pytest.raises(Refused, match="cannot be a template"):
        step_broadcast(store, clock, whatsapp_template="HX" + "ab" * 16)


def test_a_dry_run_shows_three_samples_of_the_steps_message_and_records_nothing(
    store: EventStore, clock: FakeClock
) -> None:
    pids = [control(store, n) for n in range(5)]
    planned = broadcasts.create(
        store,
        CATALOGUE,
        {"step": "welcome", "filter": {"intervention": "walk-control"}},
        actor="test",
        now=clock.now(),
        dry_run=True,
    )
    assert planned.broadcast_id is None and planned.recipients == 5
    assert len({s["participant_id"] for s in planned.samples} & set(pids)) == 3
    for sample in planned.samples:
        n = pids.index(sample["participant_id"])
        assert sample["text"].startswith(f"Hi P{n}, welcome to the walking study!")
    assert all(types_of(store, p) == ["participant.enrolled"] for p in pids)


def test_each_recipient_enters_the_step_through_a_turn_and_gets_its_message_once(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    pids = [control(store, n) for n in range(3)]
    drain(database_url, store, clock)  # the welcome greeting and its question
    planned = step_broadcast(store, clock)
    assert settle(store, clock.now()) == ["started"] * 3
    assert settle(store, clock.now()) == []  # nothing is due twice
    drain(database_url, store, clock)
    drain(database_url, store, clock)  # nothing more to do: no second message
    bid = planned.broadcast_id
    for pid in pids:
        entered = [
            e.data for e in store.load(participant_stream(pid)) if e.event_type == "step.entered"
        ]
        assert (entered[-1].step, entered[-1].via, entered[-1].from_step) == (
            "tip",
            "broadcast",
            "welcome",
        )
        mine = [q for q in queued(store, pid) if q["broadcast_id"] == bid]
        assert len(mine) == 1 and mine[0]["kind"] == "broadcast"
        assert mine[0]["body"].startswith(TIP)
    progress = broadcasts.show(store, str(bid))["progress"]
    assert progress["held"] == 0 and progress["pending"] == 3  # queued, not yet dispatched
    assert {r["participant_id"] for r in broadcasts.recipients(store, str(bid))} == set(pids)


def test_a_participant_who_opts_out_or_withdraws_before_the_turn_is_held_by_it(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    opted, withdrawn, before = (control(store, n) for n in range(3))
    store.append(participant_stream(before), [ParticipantOptedOut(source="operator")])
    planned = step_broadcast(store, clock)
    assert sorted(settle(store, clock.now())) == ["held", "started", "started"]
    store.append(participant_stream(opted), [ParticipantOptedOut(source="operator")])
    store.append(
        participant_stream(withdrawn),
        [ParticipantWithdrawn(reason="moved away", requested_by="participant")],
    )
    drain(database_url, store, clock)
    reasons = {
        r["participant_id"]: (r["state"], r["reason"])
        for r in broadcasts.recipients(store, str(planned.broadcast_id))
    }
    assert reasons == {
        before: ("held", "opted out"),
        opted: ("held", "opted out"),
        withdrawn: ("held", "participant withdrawn"),
    }
    for pid in (opted, withdrawn, before):
        assert not [q for q in queued(store, pid) if q["broadcast_id"]]
        assert "step.entered" not in types_of(store, pid)[-3:]


def test_whatsapp_outside_the_window_is_held_for_a_step(
    store: EventStore, clock: FakeClock
) -> None:
    pid = control(store, 1, channel="whatsapp")
    planned = step_broadcast(store, clock)
    clock.advance(timedelta(minutes=1))
    assert settle(store, clock.now()) == ["held"]
    [row] = broadcasts.recipients(store, str(planned.broadcast_id))
    assert "WhatsApp 24-hour window closed" in row["reason"]
    assert "broadcast.step_requested" not in types_of(store, pid)


def test_a_taken_over_participant_is_held_and_quiet_hours_defer_the_step(
    store: EventStore,
) -> None:
    taken = control(store, 1)
    night = datetime(2026, 12, 8, 3, 0, tzinfo=UTC)  # 22:00 in Toronto
    store.append(participant_stream(taken), [TakeoverStarted(by="staff:a@example.org")])
    waiting = control(store, 2)
    planned = broadcasts.create(
        store,
        CATALOGUE,
        {"step": "tip", "filter": {"intervention": "walk-control"}},
        actor="test",
        now=night,
    )
    quiet = QuietRules(parse_quiet_hours("21:00-08:00"))
    assert sorted(settle(store, night, quiet)) == ["deferred", "held"]
    assert "broadcast.step_requested" not in types_of(store, waiting)
    morning = datetime(2026, 12, 8, 13, 0, tzinfo=UTC)  # 08:00 in Toronto
    assert settle(store, morning, quiet) == ["started"]
    states = {
        r["participant_id"]: (r["state"], r["reason"])
        for r in broadcasts.recipients(store, str(planned.broadcast_id))
    }
    assert states[taken] == ("held", "conversation taken over by staff")
    assert states[waiting] == ("pending", None)  # started: its turn sends the message
    assert "broadcast.step_requested" in types_of(store, waiting)
