"""A deterministic end-to-end harness: the real web app, flow, worker, dispatcher and timers,
driven step by step (no threads of its own, no sleeping) over a FakeClock.

Researcher API calls and signed Twilio webhooks go through the Flask app (`create_app`); turns
are run by the real `bot.runtime.routing.build_handler` with the real `openai` SDK against a
FakeOpenAI;
replies leave through the real dispatcher and Twilio SDK to a FakeTwilio. `settle()` fires due
timers, drains the work queue and the outbox until nothing moves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from werkzeug.test import TestResponse

from bot.channel.dispatcher import Dispatcher
from bot.channel.factory import build_messenger
from bot.conversation.learned import LearnedLine
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler, intervention_catalogue
from bot.runtime.worker import Worker
from bot.store.events import Event, EventData, participant_stream
from bot.store.schema import timers
from bot.store.services import Services
from bot.timers.scheduler import Scheduler
from bot.web import create_app
from modules import MODULES
from modules.step import StepModule
from tests.conftest import TEST_MASTER_KEY
from tests.fakes.openai_api import FakeOpenAI, RecordedChat, Script
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import AUTH_TOKEN, TOKEN
from tests.web.twilio_requests import INBOUND, PUBLIC, message, new_sid, sign

# Interventions written for scenario tests (each one valid: a deployment refuses invalid ones)
SCENARIO_INTERVENTIONS = Path(__file__).resolve().parent / "interventions"
TORONTO = ZoneInfo("America/Toronto")
DAY = date(2026, 5, 4)  # a Monday; Toronto is on EDT (UTC-4), far from a DST change
PHONE = "+14165550123"
SUPERVISOR = "+14165550199"
BASE_ENV = {
    "TANDEM_API_TOKENS": TOKEN,
    "PUBLIC_BASE_URL": PUBLIC,
    "MESSENGER": "twilio",
    "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
    "SUPERVISOR_PHONES": "none",  # scenarios that need a supervisor set one
    "TWILIO_AUTH_TOKEN": AUTH_TOKEN,
    "TWILIO_FROM_NUMBER": "+15005550006",
    "OPENAI_API_KEY": "test-key",
    "TANDEM_MODEL": "fake-model",
    # Far above a scripted reply's time: at 1 s a busy 2-core machine timed out a reply the fake
    # had ready (a scenario test failed once in the whole suite). A test of timeouts sets its
    # own (llm_down_three_ways.yaml: 3 s) and a hang longer than it.
    "LLM_TIMEOUT_SECONDS": "10",
    "LLM_MAX_RETRIES": "0",
    "SAFETY_CLASSIFIER": "off",  # scripted in FIFO order; tests/conversation covers it
    # SAFETY_LEARNED is left at its default (on): every scenario runs the learned line too
    "DEFAULT_REGION": "US",
    "DEFAULT_TIMEZONE": "America/Toronto",
    "INTERVENTION": "habit-coach",  # PromptPipe's coach: the intake and feedback modules
}


def local(hh_mm: str, days: int = 0) -> datetime:
    """An instant given as Toronto wall-clock time on DAY (+ days)."""
    hour, minute = (int(part) for part in hh_mm.split(":"))
    day = DAY + timedelta(days=days)
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=TORONTO)


class Harness:
    """One deployment's moving parts, stepped explicitly; `pid` is the participant under test."""

    def __init__(
        self,
        database_url: str,
        llm: FakeOpenAI,
        twilio: FakeTwilio,
        clock: FakeClock,
        env: Mapping[str, str] | None = None,
        interventions: Path | None = None,
        learned: Callable[[], LearnedLine] | None = None,
    ) -> None:
        self.database_url, self.llm, self.twilio, self.clock = database_url, llm, twilio, clock
        self.env, self.interventions = dict(env or {}), interventions
        self.learned = learned  # another learned crisis line than the shipped model
        values = {
            **BASE_ENV,
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": llm.url + "/v1",
            "TWILIO_API_BASE_URL": twilio.url,
            "TWILIO_ACCOUNT_SID": twilio.account_sid,
            **self.env,
        }
        self.settings = load_settings(values, env_file=None)
        self.services: Services = build_services(self.settings, clock=clock)
        self.store = self.services.store
        # `interventions`: serve the interventions under that folder instead of interventions/
        modules = None
        if interventions is not None:
            step = StepModule(root=interventions, modules=[n for n in MODULES if n != "step"])
            modules = {**MODULES, "step": step}
        catalogue = intervention_catalogue(interventions or INTERVENTIONS)
        app = create_app(self.services, catalogue)
        app.testing = True
        self.client = app.test_client()
        handler = build_handler(self.services, modules=modules, learned_line=learned)
        self.worker = Worker(self.services, handler, "scenario-worker")
        messenger = build_messenger(self.settings)
        self.dispatcher = Dispatcher(self.services, messenger, "scenario-dispatcher")
        self.scheduler = Scheduler(self.services)  # only its policy and fire_due: no threads
        self.pid = ""
        self.phone = PHONE
        self.family: list[Harness] = [self]  # every process of this deployment, to close

    def close(self) -> None:
        for harness in self.family:
            harness.services.close()

    def restart(self, at: datetime | None = None, **env: str) -> Harness:
        """A new process over the same database (optionally at a later time, other settings);
        this one is shut down first."""
        self.services.close()
        if at is not None:
            self.clock.set(at)
        fresh = Harness(
            self.database_url,
            self.llm,
            self.twilio,
            self.clock,
            {**self.env, **env},
            self.interventions,
            self.learned,
        )
        fresh.pid, fresh.phone = self.pid, self.phone
        self.family.append(fresh)
        fresh.family = self.family
        return fresh

    # -- the outside world -------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None) -> TestResponse:
        """A researcher API call with a valid bearer token; `path` after /conversation."""
        headers = {"Authorization": f"Bearer {TOKEN}"}
        return self.client.open(f"/conversation{path}", method=method, json=body, headers=headers)

    def enroll(self, settle: bool = True, **fields: Any) -> TestResponse:
        """POST /conversation/participants; the participant becomes the one under test."""
        body = {"phone_number": self.phone, "timezone": "America/Toronto", **fields}
        response = self.api("POST", "/participants", body)
        if response.status_code == 201:
            self.pid = response.get_json()["result"]["id"]
        if settle:
            self.settle()
        return response

    def text(self, body: str, sid: str | None = None, sender: str | None = None) -> TestResponse:
        """An inbound SMS as Twilio posts it (signed), then everything it sets off."""
        response = self.deliver(body, sid, sender)
        self.settle()
        return response

    def deliver(self, body: str, sid: str | None = None, sender: str | None = None) -> TestResponse:
        """Only the webhook: the message is recorded and queued, nothing is processed yet."""
        form = message(body, sender=sender or self.phone, MessageSid=sid or new_sid())
        headers = {"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)}
        response = self.client.post(INBOUND, data=form, headers=headers)
        assert response.status_code == 200, response.get_data(as_text=True)
        return response

    def script(self, *replies: Script) -> None:
        """Queue the LLM's next answers, in order."""
        self.llm.script(*replies)

    # -- time ------------------------------------------------------------------------------

    def settle(self, rounds: int = 100) -> None:
        """Fire due timers, run every due turn, send every due message, until nothing moves."""
        for _ in range(rounds):
            moved = len(self.scheduler.fire_due())
            while handled := self.worker.run_once():
                moved += handled
            while sent := self.dispatcher.run_once():
                moved += sent
            if not moved:
                return
        raise AssertionError(f"still busy after {rounds} rounds")

    def advance(self, delta: timedelta) -> None:
        """Move the clock on, stopping at each timer's due instant on the way (as a running
        scheduler would), and settle."""
        self.until(self.clock.now() + delta)

    def until(self, when: datetime) -> None:
        for _ in range(1000):
            self.settle()
            due = self._next_due()
            if due is None or due > when:
                break
            self.clock.set(max(due, self.clock.now()))
        else:
            raise AssertionError("timers kept coming due")
        self.clock.set(when)
        self.settle()

    def _next_due(self) -> datetime | None:
        query = select(func.min(timers.c.due_at)).where(timers.c.status == "scheduled")
        with self.store.reading() as conn:
            return conn.execute(query).scalar()

    # -- what happened ----------------------------------------------------------------------

    def outbound(self, to: str | None = None) -> list[str]:
        """The bodies FakeTwilio received for `to` (the participant's phone), in order."""
        return [m.form.get("Body", "") for m in self.twilio.messages_to(to or self.phone)]

    def events(self, *types: str, pid: str | None = None) -> list[Event]:
        loaded = self.store.load(participant_stream(pid or self.pid))
        return [e for e in loaded if not types or e.event_type in types]

    def data(self, *types: str, pid: str | None = None) -> list[Any]:
        return [e.data for e in self.events(*types, pid=pid)]

    def types(self, pid: str | None = None) -> list[str]:
        return [e.event_type for e in self.events(pid=pid)]

    def participant(self, pid: str | None = None) -> dict[str, Any]:
        row = self.store.projection_row("participants", pid or self.pid)
        assert row is not None
        return row

    def timers(self, **where: Any) -> list[dict[str, Any]]:
        """The participant's timers rows, in the order they were set."""
        query = select(timers).where(timers.c.participant_id == self.pid)
        for column, value in where.items():
            query = query.where(timers.c[column] == value)
        with self.store.reading() as conn:
            return [
                dict(r._mapping)
                for r in conn.execute(query.order_by(timers.c.scheduled_at, timers.c.due_at))
            ]

    @property
    def requests(self) -> list[RecordedChat]:
        """Every chat completion the LLM server received, in order."""
        return self.llm.requests

    def append(self, *events: EventData) -> None:
        """Record events directly (a "Given" that the API cannot set up, such as legacy data)."""
        self.store.append(participant_stream(self.pid), list(events))
