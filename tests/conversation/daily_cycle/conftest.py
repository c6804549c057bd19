"""A daily-cycle harness: the timers harness plus the habit handler, on_reply and a fake LLM."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.channel import outbound
from bot.conversation import timer_turns
from bot.conversation.daily_cycle.prompt import register
from bot.conversation.daily_cycle.replies import on_reply
from bot.conversation.tooling import ToolContext
from bot.core.clock import FakeClock
from bot.runtime.tool_registry import HABIT_PROMPTS
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled, ProfileSaved, StateTransitioned
from bot.store.event_types.timers import TransitionRequested
from bot.store.event_types.work import WorkCompleted
from bot.store.events import EventData, NewEvent, new_id, participant_stream
from bot.timers.firing import FiringPolicy
from bot.timers.reactions import on_inbound
from tests.timers.conftest import INACTIVE, Harness
from tools.scheduler import Scheduler
from tools.scheduler import run as scheduler

TORONTO = ZoneInfo("America/Toronto")
DAY = date(2026, 5, 4)  # a Monday; Toronto is on EDT (UTC-4)
GENERATED = (
    "After coffee, try a 1-minute stretch — it helps you feel awake. Would that feel doable?"
)
PROFILE = {
    "habit_domain": "movement",
    "prompt_anchor": "after coffee",
    "preferred_time": "9:30am",
    "motivational_frame": "feel awake",
}
MODULE_REPLY = "Thanks for telling me!"


def local(hh_mm: str, day: date = DAY) -> datetime:
    """An instant given as Toronto wall-clock time."""
    hour, minute = (int(part) for part in hh_mm.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=TORONTO)


@dataclass(frozen=True)
class Request:
    system: str
    user: str
    purpose: str


class FakeCompleter:
    """A scripted `complete(system, user, purpose)`: replies in order (then GENERATED); a None
    reply is a failed call, an exception is raised. Records every request."""

    def __init__(self) -> None:
        self.replies: list[str | None | Exception] = []
        self.requests: list[Request] = []

    def __call__(self, system: str, user: str, purpose: str) -> tuple[str | None, list[EventData]]:
        self.requests.append(Request(system, user, purpose))
        reply = self.replies.pop(0) if self.replies else GENERATED
        if isinstance(reply, Exception):
            raise reply
        called = LLMCalled(call_id=new_id(), purpose=purpose, model="fake", ok=reply is not None)
        return reply, [called]


class CycleHarness(Harness):
    """The timers harness whose worker also does what the flow will do for the daily cycle:
    on_reply for each inbound message (then a stand-in module replies to every message), and
    a requested transition made."""

    def enroll_with_profile(self, **profile: Any) -> dict[str, Any]:
        person = self.enroll(timezone="America/Toronto")
        self.append(person["participant_id"], [ProfileSaved(changes={**PROFILE, **profile})])
        return self.participant(person["participant_id"])

    def schedule(self, person: dict[str, Any], fixed_time: str, **options: Any) -> None:
        """Create a habit schedule with the scheduler tool, as the intake LLM would."""
        pid = person["participant_id"]
        ctx = ToolContext(
            participant=self.participant(pid),
            now=self.clock.now(),
            history=self.events(pid),
            pending_timers=self.timers(pid, "scheduled"),
            options=options,
        )
        outcome = scheduler(Scheduler(action="create", type="fixed", fixed_time=fixed_time), ctx)
        assert outcome.ok, outcome.message
        self.append(pid, outcome.events)

    def until(self, end: datetime, tick: timedelta = timedelta(minutes=5)) -> None:
        """Run the scheduler and the worker until `end`, as production would."""
        self.run_until(end, tick)
        self.clock.set(end)
        self.fire()
        self.work()

    def queued(self, pid: str, *kinds: str) -> list[str]:
        return [
            e.data.body
            for e in self.events(pid, "message.queued")
            if not kinds or e.data.kind in kinds
        ]

    def _process(self, item: dict[str, Any]) -> None:
        pid = item["participant_id"]
        participant = self.participant(pid)
        if participant["status"] in INACTIVE or item["kind"] not in ("timer", "inbound"):
            super()._process(item)
            return
        now, history = self.clock.now(), self.events(pid)
        decided: list[EventData] = []
        if item["kind"] == "timer":
            timer = self.store.projection_row("timers", item["ref"])
            decided += timer_turns.handle_fired(participant, timer, history, now)
            decided += [
                StateTransitioned(
                    from_state=participant["conversation_state"],
                    to_state=e.to_state,
                    reason=e.reason,
                    source="timer",
                )
                for e in decided
                if isinstance(e, TransitionRequested)
            ]
        else:
            inbound = next(e for e in history if e.event_id == item["ref"])
            decided += on_inbound(participant, self.timers(pid, "scheduled"), now, inbound)
            decided += on_reply(participant, inbound.data.body, history, now, inbound)
            decided += outbound.to_participant(participant, MODULE_REPLY)
        decided.append(WorkCompleted(work_id=item["work_id"]))
        self.store.append(participant_stream(pid), [NewEvent(e) for e in decided])


@pytest.fixture
def completer() -> FakeCompleter:
    return FakeCompleter()


@pytest.fixture
def cycle(store: EventStore, clock: FakeClock, completer: FakeCompleter) -> Iterator[CycleHarness]:
    """The harness with the daily cycle registered (and the built-in handler restored after)."""
    saved = dict(timer_turns.HANDLERS)
    register(completer, HABIT_PROMPTS)
    clock.set(local("08:00"))
    try:
        yield CycleHarness(store, clock, FiringPolicy())
    finally:
        timer_turns.HANDLERS.clear()
        timer_turns.HANDLERS.update(saved)
