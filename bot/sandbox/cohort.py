"""Simulated participants on the sandbox's engine: N people enrolled in one intervention on a
throwaway SQLite database, a FakeClock moved from one due timer to the next (no sleeping), and
each person played by a persona that reads what they are sent and may answer.

The engine is the real one (bot.runtime's worker, the dispatcher, the timers' firing, the
conversation flow), as in `tandem chat` (bot.sandbox.session); only the phones are personas.
Replies go in as the Twilio webhook records them (bot.channel.inbound), at the moment the
message they answer was sent. Participant ids follow from the cohort's seed, so the decision
points' times and draws, which follow from the id (docs/decisions.md), repeat run after run.
"""

from __future__ import annotations

import heapq
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from bot.channel import inbound
from bot.channel.dispatcher import Dispatcher
from bot.channel.messenger import OutboundMessage
from bot.conversation import timer_turns
from bot.core.addresses import format_address
from bot.core.clock import FakeClock
from bot.core.config import Settings
from bot.core.localtime import parse_quiet_hours
from bot.interventions.language.intervention import Intervention
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler, intervention_catalogue
from bot.runtime.worker import Worker
from bot.sandbox.no_llm import NoLLM
from bot.sandbox.session import SandboxError, locate
from bot.sandbox.whatsapp_window import SimulatedPhones
from bot.services import enrollment
from bot.services.broadcast_sending import QuietRules
from bot.store.event_types import ParticipantEnrolled
from bot.store.events import Event, new_id, participant_stream
from bot.store.migrate import upgrade
from bot.store.projections.participants import PROJECTION
from bot.store.queries import pending_timers
from bot.store.reads.timers import next_scheduled_due
from bot.timers.scheduler import Scheduler
from modules import MODULES
from modules.step import StepModule

ACTOR = "simulation"
FIRST_PHONE = 15550_100_000  # fictional 555 numbers, one per participant
MAX_ROUNDS = 10_000  # timer/worker/dispatcher rounds before a settle gives up
MAX_EXCHANGES = 20  # persona replies answered in turn at one instant before giving up


@dataclass(frozen=True)
class Delivered:
    """A message the engine sent to participant number `n`, at `at` (the clock's time)."""

    n: int
    participant_id: str
    text: str
    at: datetime


@dataclass(frozen=True)
class Later:
    """A reply sent at `at` (after the message it answers), not at once."""

    text: str
    at: datetime


class Persona(Protocol):
    """A simulated participant: told each message they are sent, returns their reply (sent
    at once, or `Later`) or None."""

    def receive(self, message: Delivered) -> str | Later | None: ...


class Joining(Protocol):
    """A study the cohort's participants join: participant n's checked enrollment (with the
    baseline the study allocates on), and the interventions its arms run."""

    @property
    def interventions(self) -> list[str]: ...

    def join(self, n: int, enrolled: ParticipantEnrolled) -> enrollment.Checked: ...


class CohortError(SandboxError):
    """A simulation that cannot run as asked or that did not settle; the message says why."""


class Cohort:
    """N participants of one intervention, each played by a persona, on the whole engine."""

    def __init__(
        self,
        settings: Settings,
        intervention: str,
        personas: Sequence[Persona],
        start: datetime,
        *,
        seed: int = 0,
        timezone: str = "UTC",
        timezones: Sequence[str] | None = None,
        channels: Sequence[str] | None = None,
        database_url: str | None = None,
        keep: bool = False,
        llm: Any = None,
        joining: Joining | None = None,
    ) -> None:
        self.root, self.slug = locate(intervention)
        problems = intervention_catalogue(self.root).problems(self.slug)
        if problems:  # never a silent substitute: an invalid intervention is not run
            lines = "\n".join(str(problem) for problem in problems)
            raise CohortError(f"intervention {self.slug!r} cannot be used:\n{lines}")
        self.personas, self.seed, self.timezone = list(personas), seed, timezone
        self.clock = FakeClock(start)
        self.timezones = list(timezones) if timezones else [timezone] * len(self.personas)
        self.channels = list(channels) if channels else ["sms"] * len(self.personas)
        self.keep = keep  # a database kept (a simulation's run) is not thrown away on close
        self.folder = Path(tempfile.mkdtemp(prefix="tandem-cohort-"))
        self.database_url = database_url or f"sqlite:///{self.folder / 'cohort.db'}"
        self._later: list[tuple[datetime, int, int, str]] = []  # replies due, in order
        self._seq = 0
        self.settings = settings.model_copy(update={"database_url": self.database_url})
        self.services = build_services(self.settings, clock=self.clock, sandbox=True)
        self.store = self.services.store
        upgrade(self.store.engine)
        self._handlers = dict(timer_turns.HANDLERS)  # build_handler registers the decisions'
        self.llm = llm or NoLLM()  # the real client only for an intervention that needs one
        self.steps = StepModule(root=self.root, modules=[n for n in MODULES if n != "step"])
        modules = {**MODULES, self.steps.name: self.steps}
        handler = build_handler(self.services, client=self.llm, modules=modules)  # type: ignore[arg-type]  # NoLLM answers ChatClient's calls offline
        self.worker = Worker(self.services, handler, "cohort-worker")
        self.phones = SimulatedPhones()
        self.dispatcher = Dispatcher(self.services, self.phones, "cohort-dispatcher")
        self.joining = joining  # a study: each enrollment joins it (bot.sandbox.sim_study)
        slugs = [self.slug, *(joining.interventions if joining else ())]
        found = [(s, self.steps.intervention(s)[0]) for s in dict.fromkeys(slugs)]
        quiet = {s: q for s, f in found if f and (q := f.quiet_hours()) is not None}
        self.quiet = QuietRules(parse_quiet_hours(self.settings.quiet_hours), quiet)
        self.scheduler = Scheduler(self.services, intervention_quiet_hours=quiet)
        self.participant_ids: list[str] = []
        self._by_address: dict[str, int] = {}
        self.delivered = 0

    @property
    def intervention(self) -> Intervention:
        found, why = self.steps.intervention(self.slug)
        if found is None:
            raise CohortError(f"intervention {self.slug!r} cannot run: {why}")
        return found

    def participant_id(self, n: int) -> str:
        """Participant n's id: a UUID that follows from the cohort's seed and n."""
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"tandem-cohort:{self.seed}:{n}"))

    def enroll(self) -> None:
        """Enroll every persona's participant now, in one transaction, and settle: in a
        study, each joins it and `record` draws their arm, as for the API's enrollments; a
        welcome due in their quiet hours waits for their end, as anywhere."""
        enrolled: list[enrollment.Checked | ParticipantEnrolled] = []
        for n in range(len(self.personas)):
            asked = enrollment.Enrollment(
                phone=f"+{FIRST_PHONE + n}",
                channel=self.channels[n],
                timezone=self.timezones[n],
                intervention=self.slug,
            )
            event = enrollment.enrolled_event(asked, self.settings, "cli")
            event = event.model_copy(update={"participant_id": self.participant_id(n)})
            self._by_address[self.address(n)] = n
            enrolled.append(event if self.joining is None else self.joining.join(n, event))
        done = enrollment.record(self.store, enrolled, actor=ACTOR, quiet=self.quiet)
        self.participant_ids = [e.participant_id for e in done]
        self.settle()

    def run_until(self, until: datetime) -> None:
        """Move the clock to `until`, firing each timer at its own due time on the way."""
        while (due := self._next_due()) is not None and due <= until:
            self.clock.set(max(due, self.clock.now()))
            self._say_due()
            self.settle()
        self.clock.set(max(until, self.clock.now()))
        self.settle()

    def settle(self) -> None:
        """Run timers, worker and dispatcher until quiet, hand what was sent to the personas
        and record their replies; again until nobody replies."""
        for _ in range(MAX_EXCHANGES):
            self._quiet()
            replies = [
                (n, reply)
                for message in self.phones.take()
                if (n := self._by_address.get(message.to_address)) is not None
                and (reply := self._deliver(n, _text(message))) is not None
            ]
            now: list[tuple[int, str]] = []
            for n, reply in replies:
                if isinstance(reply, Later):
                    self._seq += 1
                    heapq.heappush(self._later, (reply.at, self._seq, n, reply.text))
                else:
                    now.append((n, reply))
            if not now:
                return
            for n, text in now:
                self.say(n, text)
        raise CohortError(f"personas still replying after {MAX_EXCHANGES} exchanges")

    def say(self, n: int, text: str) -> None:
        """Participant n sends `text`, recorded as the Twilio webhook records it."""
        pid, ours = self.participant_ids[n], self.settings.twilio_from_number or "+15005550006"
        form = {
            "MessageSid": "SM" + new_id().replace("-", ""),
            "From": self.address(n),
            "To": format_address(self.channels[n], ours),  # type: ignore[arg-type]
            "Body": text,
        }
        message = inbound.parse_message(form)
        with self.store.transaction() as tx:
            row = tx.row(PROJECTION, pid)
            pending = pending_timers(tx.conn, pid)
            history = partial(tx.load, participant_stream(pid))
            now = self.clock.now()
            plan = inbound.decide(message, row, pending, self.settings, now, history)
            tx.append(plan.stream_id, plan.events, plan.expected_version, plan.idempotency_key)

    def address(self, n: int) -> str:
        """Participant n's address as Twilio writes it (`whatsapp:+1555…` on WhatsApp)."""
        return format_address(self.channels[n], f"+{FIRST_PHONE + n}")  # type: ignore[arg-type]

    def events(self, n: int) -> list[Event]:
        """Participant n's events, in order."""
        return self.store.load(participant_stream(self.participant_ids[n]))

    def row(self, n: int) -> dict[str, Any]:
        found = self.store.projection_row("participants", self.participant_ids[n])
        if found is None:
            raise CohortError(f"participant {n} is not enrolled: enroll() first")
        return found

    def close(self) -> None:
        """Throw the database away and put back the timer handlers found at the start."""
        self.services.close()
        self.llm.close()
        if not self.keep:
            shutil.rmtree(self.folder, ignore_errors=True)
        timer_turns.HANDLERS.clear()
        timer_turns.HANDLERS.update(self._handlers)

    def __enter__(self) -> Cohort:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _next_due(self) -> datetime | None:
        """The next moment something happens: a timer due or a reply sent."""
        due = [d for d in (next_scheduled_due(self.store),) if d is not None]
        due += [self._later[0][0]] if self._later else []
        return min(due, default=None)

    def _say_due(self) -> None:
        """Send the replies whose moment has come, in the order they were written."""
        while self._later and self._later[0][0] <= self.clock.now():
            _, _, n, text = heapq.heappop(self._later)
            self.say(n, text)

    def _deliver(self, n: int, text: str) -> str | Later | None:
        self.delivered += 1
        return self.personas[n].receive(
            Delivered(n, self.participant_ids[n], text, self.clock.now())
        )

    def _quiet(self) -> None:
        for _ in range(MAX_ROUNDS):
            busy = len(self.scheduler.fire_due(self.clock.now()))
            busy += self.worker.run_once()
            busy += self.dispatcher.run_once()
            if not busy:
                return
        raise CohortError(f"still busy after {MAX_ROUNDS} rounds")


def _text(message: OutboundMessage) -> str:
    """What the phone shows: the body, or a template's text (its {{1}})."""
    return message.body or (message.content_variables or {}).get("1") or ""
