"""The sandbox: the real flow, worker, dispatcher and timers on a throwaway SQLite database.

One participant talks to their intervention through a collecting "phone". A FakeClock starts
at the real time and moves only on /wait (bot.sandbox.commands), which fires each timer at its
own due time on the way. Messages go in exactly as the Twilio webhook records them
(`bot.channel.inbound`), and each line is settled: timers, worker and dispatcher run until
nothing is left to do. With no LLM configured (no OPENAI_API_KEY nor OPENAI_BASE_URL) `NoLLM`
stands in.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.channel import inbound
from bot.channel.console import CollectingMessenger
from bot.channel.dispatcher import Dispatcher
from bot.channel.messenger import OutboundMessage
from bot.conversation.llm import ChatClient
from bot.core.addresses import InvalidPhoneNumber, canonical_phone, format_address
from bot.core.clock import FakeClock, SystemClock
from bot.core.config import Settings
from bot.core.phone_zone import choose_timezone
from bot.interventions.language.loader import CONFIG
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler, intervention_catalogue
from bot.runtime.worker import Worker
from bot.sandbox import DEFAULT_PHONE, commands, decision_lines, views
from bot.sandbox.no_llm import NoLLM
from bot.services import enrollment
from bot.store.events import new_id, participant_stream
from bot.store.migrate import upgrade
from bot.store.projections.participants import PROJECTION
from bot.store.queries import pending_timers
from bot.store.reads.timers import next_scheduled_due
from bot.timers.scheduler import Scheduler
from modules import MODULES
from modules.step import INTERVENTIONS, StepModule

TWILIO_TEST_NUMBER = "+15005550006"  # the "To" of messages when TWILIO_FROM_NUMBER is unset
BOT = "bot> "
ACTOR = {"actor": "chat"}
MAX_ROUNDS = 200  # timer/worker/dispatcher rounds before a settle gives up
NO_LLM_NOTICE = (
    "no LLM is configured (set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server): "
    "fixed wording works; LLM steps and judgements fail and the participant gets the fallback"
)


class SandboxError(ValueError):
    """A sandbox that cannot be set up as asked; the message says why."""


class Sandbox:
    """One participant, one intervention, the whole engine in this process."""

    def __init__(
        self,
        settings: Settings,
        intervention: str | None = None,
        phone: str = DEFAULT_PHONE,
        timezone: str | None = None,
        *,
        name: str | None = None,
        debug: bool = False,
        start: datetime | None = None,
        llm: Any = None,
    ) -> None:
        self.root, self.slug = locate(intervention or settings.intervention)
        problems = intervention_catalogue(self.root).problems(self.slug)
        if problems:  # never a silent substitute: an invalid intervention is not run
            lines = "\n".join(str(problem) for problem in problems)
            raise SandboxError(f"intervention {self.slug!r} cannot be used:\n{lines}")
        self.phone = _phone(phone, settings.default_region)
        # The enrollment's timezone rule (bot.services.enrollment): the number's own zone
        # when it has exactly one, else DEFAULT_TIMEZONE.
        self.given_timezone = timezone
        self.timezone = choose_timezone(timezone, self.phone, settings.default_timezone)[0]
        try:
            self.zone = ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise SandboxError(f"unknown timezone {self.timezone!r} (an IANA name)") from None
        self.base_settings, self.name, self.debug = settings, name, debug
        self._start, self._llm = start, llm
        self.clock = FakeClock(start or SystemClock().now())
        self.participant_id = ""
        self.told_no_llm = False
        self.build()

    def build(self) -> None:
        """A new database, migrated, and the engine on it (the clock is kept)."""
        self.folder = Path(tempfile.mkdtemp(prefix="tandem-chat-"))
        url = f"sqlite:///{self.folder / 'chat.db'}"
        self.settings = self.base_settings.model_copy(update={"database_url": url})
        self.services = build_services(self.settings, clock=self.clock, sandbox=True)
        self.store = self.services.store
        upgrade(self.store.engine)
        s = self.settings
        self.llm = self._llm or (
            ChatClient.from_settings(s) if s.openai_api_key or s.openai_base_url else NoLLM()
        )
        self.steps = StepModule(root=self.root, modules=[n for n in MODULES if n != "step"])
        # (a new one re-reads the intervention's files)
        modules = {**MODULES, self.steps.name: self.steps}
        handler = build_handler(self.services, client=self.llm, modules=modules)  # type: ignore[arg-type]  # NoLLM answers ChatClient's calls offline
        self.worker = Worker(self.services, handler, "chat-worker")
        self.phone_line = CollectingMessenger()
        self.dispatcher = Dispatcher(self.services, self.phone_line, "chat-dispatcher")
        found, _ = self.steps.intervention(self.slug)
        quiet = {self.slug: found.quiet_hours()} if found else {}
        self.scheduler = Scheduler(self.services, intervention_quiet_hours=quiet)
        self.seen = 0
        self.remarks: list[str] = []

    def close(self) -> None:
        """Throw the database away."""
        if self._llm is None:
            self.llm.close()
        self.services.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def restart(self) -> list[str]:
        """/reset: a fresh database, clock and participant; what they are sent first."""
        self.close()
        self.clock.set(self._start or SystemClock().now())
        self.build()
        return self.start()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def stream(self) -> str:
        return participant_stream(self.participant_id)

    @property
    def address(self) -> str:
        return format_address("sms", self.phone)

    def start(self) -> list[str]:
        """Enroll the participant in the intervention; returns what they are sent first."""
        asked = enrollment.Enrollment(
            phone=self.phone,
            timezone=self.given_timezone,
            intervention=self.slug,
            name=self.name,
            debug=self.debug,
        )
        enrolled = enrollment.enrolled_event(asked, self.settings, "cli")
        self.participant_id = enrolled.participant_id
        # typed at a terminal: nobody is texted, the welcome shows at once
        enrollment.record(self.store, [enrolled], actor=ACTOR["actor"], quiet=None)
        return self.settle()

    def say(self, text: str) -> list[str]:
        """The participant sends `text`, recorded as the webhook records it; what comes back."""
        form = {
            "MessageSid": "SM" + new_id().replace("-", ""),
            "From": self.address,
            "To": self.settings.twilio_from_number or TWILIO_TEST_NUMBER,
            "Body": text,
        }
        message = inbound.parse_message(form)
        with self.store.transaction() as tx:
            row = tx.row(PROJECTION, self.participant_id)
            pending = pending_timers(tx.conn, self.participant_id)
            history = partial(tx.load, self.stream)
            now = self.clock.now()
            plan = inbound.decide(message, row, pending, self.settings, now, history)
            tx.append(plan.stream_id, plan.events, plan.expected_version, plan.idempotency_key)
        return self.settle()

    def command(self, line: str) -> str:
        """Run a /command; its output (errors and unknown commands are said, not raised)."""
        return commands.run(self, line)

    def handle(self, line: str) -> str:
        """A line typed in the chat: a /command, or a message (//text sends "/text")."""
        if line.startswith("/") and not line.startswith("//"):
            return self.command(line)
        return self.transcript(self.say(line[1:] if line.startswith("//") else line))

    def take_remarks(self) -> list[str]:
        """What happened since last asked (steps entered, timers, failures), one line each."""
        taken, self.remarks = self.remarks, []
        return taken

    def transcript(self, sent: list[str]) -> str:
        """The remarks, then the messages, as the chat prints them."""
        lines = [f"  · {remark}" for remark in self.take_remarks()]
        lines += [BOT + text.replace("\n", "\n" + " " * len(BOT)) for text in sent]
        return "\n".join(lines)

    def settle(self) -> list[str]:
        """Fire due timers, run the worker and the dispatcher until all is quiet; the messages
        sent meanwhile, as shown (debug traces and texts to others marked)."""
        for _ in range(MAX_ROUNDS):
            busy = len(self.scheduler.fire_due(self.clock.now()))
            busy += self.worker.run_once()
            busy += self.dispatcher.run_once()
            if not busy:
                break
        else:
            self.remarks.append(f"still busy after {MAX_ROUNDS} rounds; stopped there")
        self.remark_since(self.seen)
        if isinstance(self.llm, NoLLM) and self.llm.calls and not self.told_no_llm:
            self.told_no_llm = True
            self.remarks.append(NO_LLM_NOTICE)
        return [self._shown(message) for message in self.phone_line.take()]

    def remark_since(self, version: int) -> None:
        new = self.store.load(self.stream, after_version=version)
        self.seen = new[-1].stream_version if new else version
        for ev in new:
            said = decision_lines.remark(ev, self.zone)  # a decision point, as it happens
            if said is None and ev.event_type in views.REMARKED:
                said = views.describe(ev, self.zone, self.timer_kind)
            if said is not None and ev.meta.get("actor") != ACTOR["actor"]:
                self.remarks.append(f"{ev.event_type}: {said}")

    def _shown(self, message: OutboundMessage) -> str:
        body = message.body or f"[template {message.content_sid}] {message.content_variables}"
        if message.to_address != self.address:
            return f"[to {message.to_address}] {body}"
        row = self.store.projection_row("outbox", message.outbox_id) or {}
        return f"[debug] {body}" if row.get("kind") == "debug" else body

    def timer_kind(self, timer_id: str) -> str:
        row = self.store.projection_row("timers", timer_id)
        return str(row["kind"]) if row else "timer"

    def next_due(self) -> datetime | None:
        """When the next pending timer is due."""
        return next_scheduled_due(self.store)

    def row(self) -> dict[str, Any]:
        row = self.store.projection_row("participants", self.participant_id)
        if row is None:
            raise SandboxError("no participant yet: start() enrolls one")
        return row

    def banner(self) -> str:
        """What is running, for whom, with which LLM."""
        found, why = self.steps.intervention(self.slug)
        if found:
            running = f"intervention {self.slug}: {found.config.title}, revision {found.revision}"
        else:
            running = (
                f"intervention {self.slug!r} cannot run ({why}); the module of the "
                "participant's conversation state (intake) answers instead"
            )
        s, llm = self.settings, "none configured"
        if not isinstance(self.llm, NoLLM):
            llm = f"{s.model} at {s.openai_base_url or 'OpenAI'}"
        local = self.clock.now().astimezone(self.zone)
        return "\n".join(
            [
                "Tandem chat: the whole engine on a throwaway database; the clock moves only "
                "with /wait.",
                running,
                f"participant {self.phone} · {self.timezone} · {local:%a %d %b %Y %H:%M}",
                f"LLM: {llm}",
                "/help lists the commands; /quit or Ctrl-D ends.",
            ]
        )


def locate(intervention: str) -> tuple[Path, str]:
    """(the folder holding interventions, the slug): a slug under interventions/, or the path
    of an intervention folder anywhere (one holding intervention.yaml)."""
    folder = Path(intervention).expanduser()
    if (folder / CONFIG).is_file():
        folder = folder.resolve()
        return folder.parent, folder.name
    if "/" in intervention or intervention.startswith("."):
        raise SandboxError(f"{intervention}: no {CONFIG} there, so not an intervention folder")
    return INTERVENTIONS, intervention


def _phone(raw: str, region: str | None) -> str:
    """An E.164 number as given (fictional 555 numbers welcome), else a national number read
    in DEFAULT_REGION."""
    if raw.startswith("+") and raw[1:].isdigit() and 8 <= len(raw) <= 16 and raw[1] != "0":
        return raw
    try:
        return canonical_phone(raw, region)
    except InvalidPhoneNumber as exc:
        raise SandboxError(f"phone {raw}: {exc}") from None
