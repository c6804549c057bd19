"""Decision points decided as they fire (bot.timers.firing `Turns`): a batch of points in one
transaction, with what a worker's turn would have recorded, each point decided exactly once
whatever fails, and several firers cooperating."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.conversation import timer_turns
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.core.keys import generate_master_key
from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.interventions.interpreter.decision_schedule import DECISION
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import TURNS_AT_FIRING, build_handler
from bot.runtime.worker import Worker, turns_at_firing
from bot.store.event_types.participants import ParticipantOptedOut
from bot.store.event_types.takeover import TakeoverStarted
from bot.store.event_types.work import WorkCompleted
from bot.store.events import NewEvent, participant_stream
from bot.store.services import Services
from bot.timers import one_shot
from bot.timers.scheduler import Scheduler
from modules import MODULES
from modules.step import StepModule
from tests.conftest import fresh_database
from tests.factories import enrolled, received
from tests.store.statements import statements

SLUG = "walk-firing"
DAY = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)  # 14:00 UTC: inside walk-mrt's windows
AT = DAY + timedelta(seconds=59)
NAMES = ("walk_prompt", "walk_prompt_2", "walk_prompt_3")


@dataclass
class Deployment:
    services: Services
    handler: Any

    def scheduler(self, at_firing: bool = True) -> Scheduler:
        turns = turns_at_firing(self.handler, TURNS_AT_FIRING, None) if at_firing else None
        return Scheduler(self.services, turns=turns)

    def enroll(self, ids: list[str], extra: list | None = None) -> None:
        """Participants `ids`, each with one point of each of NAMES due in DAY's minute."""
        with self.services.store.transaction() as tx:
            for n, pid in enumerate(ids):
                data = enrolled(
                    participant_id=pid, phone=f"+1415555{n:04d}", timezone="UTC", intervention=SLUG
                )
                joined = NewEvent(data)
                batch: list = [joined, WorkCompleted(work_id=joined.event_id, skipped="test")]
                person = {"participant_id": pid, "timezone": "UTC"}
                for k, name in enumerate(NAMES):
                    payload = {"intervention": SLUG, "decision": name, "index": 0}
                    payload["anchor"] = DAY.isoformat()
                    due = DAY + timedelta(seconds=(n + k) % 50)
                    batch.append(
                        one_shot.scheduled(
                            person, DECISION, due, scope=f"decision:{name}", payload=payload
                        )
                    )
                tx.append(participant_stream(pid), batch)

    def drain(self) -> int:
        worker = Worker(self.services, self.handler, "test-worker")
        handled = 0
        while done := worker.run_once():
            handled += done
        return handled

    def made(self, pid: str) -> list[dict[str, Any]]:
        """(decision, index) -> decision.made payload, for participant `pid`."""
        found = self.services.store.load(participant_stream(pid))
        return [e.data.model_dump() for e in found if e.event_type == "decision.made"]

    def count(self, pid: str, event_type: str) -> int:
        found = self.services.store.load(participant_stream(pid))
        return sum(1 for e in found if e.event_type == event_type)


def _intervention(folder: Path) -> Path:
    root = folder / "interventions"
    shutil.copytree(INTERVENTIONS / "walk-mrt", root / SLUG)
    source = root / SLUG / "decisions" / "walk_prompt.md"
    for name in NAMES[1:]:
        shutil.copy(source, source.with_name(f"{name}.md"))
    return root


def _deploy(url: str, root: Path, key: str) -> Deployment:
    env = {
        "DATABASE_URL": url,
        "INTERVENTION": SLUG,
        "SAFETY_CLASSIFIER": "off",
        "TANDEM_MASTER_KEY": key,
    }
    services = build_services(load_settings(env, env_file=None), clock=FakeClock(AT))
    step = StepModule(root=root, modules=[n for n in MODULES if n != "step"])
    return Deployment(services, build_handler(services, modules={**MODULES, "step": step}))


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    saved = dict(timer_turns.HANDLERS), set(timer_turns.ALWAYS)
    yield _intervention(tmp_path)
    timer_turns.HANDLERS.clear()
    timer_turns.HANDLERS.update(saved[0])
    timer_turns.ALWAYS.clear()
    timer_turns.ALWAYS.update(saved[1])


@pytest.fixture
def deployed(database_url: str, root: Path) -> Iterator[Deployment]:
    deployment = _deploy(database_url, root, generate_master_key())
    yield deployment
    deployment.services.close()


def _ids(n: int) -> list[str]:
    return [f"00000000-0000-4000-8000-{k:012d}" for k in range(n)]


def _key(made: dict[str, Any]) -> tuple:
    return (made["decision"], made["index"])


def test_points_decided_as_they_fire_are_what_workers_would_record(
    database_url: str, root: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    key = generate_master_key()
    kind = "postgresql" if database_url.startswith("postgresql") else "sqlite"
    (tmp_path / "other").mkdir()
    firing, working = (
        _deploy(database_url, root, key),
        _deploy(fresh_database(kind, request, tmp_path / "other"), root, key),
    )
    try:
        ids = _ids(8)
        for deployment in (firing, working):
            deployment.enroll(ids)
            # the last participant has a message waiting for its turn: their points wait too
            deployment.services.store.append(participant_stream(ids[-1]), [received()])
        firing.scheduler(at_firing=True).fire_due(AT)
        # decided in the firing: every point but the busy participant's, no work left for them
        for pid in ids[:-1]:
            assert len(firing.made(pid)) == len(NAMES)
            assert firing.count(pid, "work.completed") == 1 + len(NAMES)
        assert firing.made(ids[-1]) == []
        firing.drain()
        working.scheduler(at_firing=False).fire_due(AT)
        working.drain()
        for pid in ids:
            at_firing = sorted(firing.made(pid), key=_key)
            by_worker = sorted(working.made(pid), key=_key)
            assert len(at_firing) == len(NAMES)
            assert at_firing == by_worker  # availability, reason, probabilities, draw, option
            for name in ("message.queued", "timer.scheduled", "timer.fired"):
                assert firing.count(pid, name) == working.count(pid, name), name
        # the walk-mrt rule: no prompt within 2 h of the last, so a participant's later points
        # were decided on what the earlier ones (in earlier batches) sent
        reasons = [m["unavailable_reason"] for pid in ids for m in firing.made(pid)]
        assert "condition" in reasons
    finally:
        firing.services.close()
        working.services.close()


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite: a window each
def test_a_batch_of_points_costs_the_same_statements_however_many(deployed: Deployment) -> None:
    few, many = _ids(40)[:4], _ids(40)[4:]
    deployed.enroll(few + many)
    scheduler = deployed.scheduler()
    engine = deployed.services.store.engine
    # the first point of each participant: one batch each, due within the same second
    first_few = [_first_timer(deployed, pid) for pid in few]
    first_many = [_first_timer(deployed, pid) for pid in many]
    from bot.timers.firing import fire_many

    with statements(engine) as small:
        fire_many(deployed.services.store, first_few, AT, scheduler.policy)
    with statements(engine) as large:
        fire_many(deployed.services.store, first_many, AT, scheduler.policy)
    assert all(len(deployed.made(pid)) == 1 for pid in few + many)
    assert len(large) == len(small)  # 36 points or 4: the same statements
    assert len(large) < 20


def _first_timer(deployed: Deployment, pid: str) -> str:
    with deployed.services.store.reading() as conn:
        from bot.store.queries import pending_timers

        # the first decision point (a welcome held by quiet hours is a `greeting` timer)
        return str(
            next(t["timer_id"] for t in pending_timers(conn, pid) if t["kind"] == "decision")
        )


class _Died(BaseException):
    """A process dying mid-batch: nothing catches it."""


def test_a_batch_that_dies_midway_records_nothing_and_loses_nothing(deployed: Deployment) -> None:
    ids = _ids(12)
    deployed.enroll(ids)
    turns = turns_at_firing(deployed.handler, TURNS_AT_FIRING, None)
    calls = [0]

    def dying(due: Any) -> Any:
        calls[0] += 1
        if calls[0] == 5:  # the fifth point of the first batch: the process dies
            raise _Died
        return turns[DECISION](due)

    scheduler = Scheduler(deployed.services, turns={DECISION: dying})
    with pytest.raises(_Died):
        scheduler.fire_due(AT)
    assert all(deployed.made(pid) == [] for pid in ids)  # the batch's four points: not kept
    assert all(deployed.count(pid, "timer.fired") == 0 for pid in ids)
    deployed.scheduler().fire_due(AT)  # the next leader
    deployed.scheduler().fire_due(AT)  # and once more: nothing is decided twice
    assert deployed.drain() == 0
    for pid in ids:
        made = deployed.made(pid)
        assert sorted(_key(m) for m in made) == sorted((name, 0) for name in NAMES)
        assert deployed.count(pid, "timer.fired") == len(NAMES)


def test_a_turn_that_fails_at_firing_is_left_to_a_worker(deployed: Deployment) -> None:
    ids = _ids(6)
    deployed.enroll(ids)
    turns = turns_at_firing(deployed.handler, TURNS_AT_FIRING, None)
    failed: list[str] = []

    def failing_once(due: Any) -> Any:
        pid = str(due.participant["participant_id"])
        if pid == ids[2] and not failed:
            failed.append(pid)
            raise RuntimeError("a turn that fails")
        return turns[DECISION](due)

    Scheduler(deployed.services, turns={DECISION: failing_once}).fire_due(AT)
    assert failed == [ids[2]]
    assert deployed.made(ids[2]) == []  # fired, waiting for the worker
    assert deployed.drain() == len(NAMES)  # its points: in order, by a worker
    for pid in ids:
        assert sorted(_key(m) for m in deployed.made(pid)) == sorted((n, 0) for n in NAMES)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_two_firers_at_once_decide_each_point_once(deployed: Deployment) -> None:
    ids = _ids(60)
    deployed.enroll(ids)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def fire() -> None:
        scheduler = deployed.scheduler()
        start.wait()
        try:
            scheduler.fire_due(AT)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=fire) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    deployed.drain()
    for pid in ids:
        assert sorted(_key(m) for m in deployed.made(pid)) == sorted((n, 0) for n in NAMES)
        assert deployed.count(pid, "timer.fired") == len(NAMES)


def test_unavailable_at_firing_records_the_reason(deployed: Deployment) -> None:
    held, stopped, free = _ids(3)
    deployed.enroll([held, stopped, free])
    store, clock = deployed.services.store, deployed.services.clock
    clock.set(DAY - timedelta(minutes=5))  # before the points are due
    store.append(participant_stream(held), [TakeoverStarted(by="staff:a@example.org")])
    store.append(participant_stream(stopped), [ParticipantOptedOut(source="keyword")])
    clock.set(AT)
    deployed.scheduler().fire_due(AT)
    deployed.drain()

    def reasons(pid: str) -> set[str | None]:
        return {m["unavailable_reason"] for m in deployed.made(pid)}

    assert reasons(held) == {"takeover"}
    assert reasons(stopped) == {"opted_out"}
    assert "takeover" not in reasons(free) and "opted_out" not in reasons(free)
    for pid in (held, stopped, free):
        for made in deployed.made(pid):
            assert made["seed"] and made["moderators"] == {"stress": None}
