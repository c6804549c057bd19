"""Synthetic participants for `tandem simulate`: personas/<name>.yaml read into typed Personas
(every problem at file:line, as the interventions' loader says them), and the scripted player
that answers as a persona would, drawing every choice from its own seeded random stream.

A scripted persona needs no LLM: its replies come from the lists it declares, its answers to
a question from the question's numbered options. An LLM persona draws whether, when and what
kind of reply (STOP, a crisis line) from the same stream, and an LLM writes the text of its
other replies (bot.sandbox.persona_llm); without an LLM it is refused, never played as a
scripted one in its place.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from pathlib import Path
from statistics import NormalDist
from typing import Literal, Protocol
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.core.author_errors import worded
from bot.interventions.language.intervention import Source
from bot.interventions.language.loader import parse_yaml
from bot.interventions.language.problems import InterventionError, Problem

NUMBERED = re.compile(r"^\s*(\d+)[.)]\s", re.MULTILINE)
# A scale asked for in words: "a number from 0 to 10", "Reply 1 (never) to 5 (always)", "1-7".
SCALE = re.compile(r"(?<![\d.])(\d{1,3})(?:\s*\([^)]*\))?\s*(?:-|–|to)\s*(\d{1,3})(?!\d|\.\d)")
# A message that asks for an answer (replied to at the persona's full rate, not `statements`).
ASKS = re.compile(r"reply with (a number|anything)|\?\s*$", re.IGNORECASE | re.MULTILINE)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Latency(Strict):
    """Minutes from a message to the reply: log-normal with this median and spread (sigma)."""

    median_minutes: float = Field(5.0, gt=0)
    spread: float = Field(0.8, ge=0)
    max_minutes: float = Field(720.0, gt=0)


class Replies(Strict):
    """Whether and when the persona replies to a message."""

    probability: float = Field(0.8, ge=0, le=1)
    statements: float = Field(0.3, ge=0, le=1)  # of those, the share answering a non-question
    latency: Latency = Latency()
    active_hours: tuple[time, time] = (time(8), time(22))  # local; a reply waits for them


class Answers(Strict):
    """How a question with options is answered: a valid option, an invalid number, or text
    off the topic; the rest of the probability (if any) is a valid option too."""

    valid: float = Field(0.8, ge=0, le=1)
    invalid: float = Field(0.1, ge=0, le=1)
    off_topic: float = Field(0.1, ge=0, le=1)

    @model_validator(mode="after")
    def _sums(self) -> Answers:
        if self.valid + self.invalid + self.off_topic > 1 + 1e-9:
            raise ValueError("valid + invalid + off_topic add up to more than 1")
        return self


class Persona(Strict):
    """One kind of participant (personas/<name>.yaml)."""

    kind: Literal["scripted", "llm"] = "scripted"
    description: str
    traits: list[str] = []
    timezone: str = "UTC"
    weight: float = Field(1.0, ge=0)  # share of the simulated participants
    replies: Replies = Replies()
    answers: Answers = Answers()
    dropout_per_day: float = Field(0.0, ge=0, le=1)  # chance a day of going silent for good
    stop: float = Field(0.0, ge=0, le=1)  # chance per reply of texting STOP instead
    crisis: float = Field(0.0, ge=0, le=1)  # chance per reply of a crisis line instead
    crisis_lines: list[str] = []
    whatsapp: float = Field(0.0, ge=0, le=1)  # chance the participant texts on WhatsApp
    chatter: list[str] = ["ok", "thanks", "sounds good"]
    off_topic_lines: list[str] = ["what time is it?", "who is this", "lol"]
    model: str | None = None  # an LLM persona's model (TANDEM_MODEL otherwise)
    # A study's baseline values this persona fixes (the others are drawn), checked against
    # the study simulated (bot.sandbox.sim_study).
    baseline: dict[str, str | int | float | bool] = {}

    @model_validator(mode="after")
    def _consistent(self) -> Persona:
        if self.crisis > 0 and not self.crisis_lines:
            raise ValueError("`crisis` is above 0 but `crisis_lines` declares no lines")
        if not self.chatter:
            raise ValueError("`chatter` needs at least one line")
        try:
            ZoneInfo(self.timezone)
        except (KeyError, ValueError):
            raise ValueError(f"`timezone`: unknown IANA timezone {self.timezone!r}") from None
        return self


class PersonaError(InterventionError):
    """Personas that cannot be used; `problems` says why, each at file:line."""


def read_persona(path: Path) -> tuple[Persona | None, list[Problem]]:
    """The persona in `path`, or every problem found reading it."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(file, 1, f"cannot read the file: {exc}")]
    try:
        meta, lines = parse_yaml(text, 1)
    except ValueError as exc:
        return None, [Problem(file, getattr(exc, "line", 1), str(exc))]
    source = Source(file, lines, 1, text=text)
    try:
        return Persona.model_validate(meta), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            loc, message = worded(error)
            problems.append(Problem(file, source.line(*loc) or 1, message))
        return None, problems


def load_personas(folder: Path) -> dict[str, Persona]:
    """Every personas/<name>.yaml in `folder` by name; PersonaError lists every problem."""
    if not folder.is_dir():
        raise PersonaError([Problem(str(folder), None, "no such personas folder")])
    found: dict[str, Persona] = {}
    problems: list[Problem] = []
    for path in sorted(folder.glob("*.yaml")):
        persona, wrong = read_persona(path)
        problems += wrong
        if persona is not None:
            found[path.stem] = persona
    if not found and not problems:
        problems.append(Problem(str(folder), None, "no personas (<name>.yaml) in this folder"))
    if problems:
        raise PersonaError(problems)
    return found


@dataclass(frozen=True)
class Reply:
    """What a player sends, `after` the message it answers (moved into its active hours)."""

    text: str
    after: timedelta
    kind: str  # answer, invalid, off_topic, chatter, stop, crisis, llm


class Writer(Protocol):
    """Writes an LLM persona's reply to the conversation so far (("bot" | "me", text) pairs,
    the bot's last); None when the LLM failed, and then nothing is sent."""

    def write(self, persona: Persona, conversation: list[tuple[str, str]]) -> str | None: ...


@dataclass
class Player:
    """One simulated participant playing `persona` with its own random stream; an LLM persona
    has a `writer` for its replies' text."""

    name: str
    persona: Persona
    rng: random.Random
    started: datetime
    writer: Writer | None = None
    whatsapp: bool = False  # enrolled on WhatsApp (drawn by the simulation)
    silent_from: datetime | None = None  # dropped out: never replies from then on
    stopped: bool = False
    said: list[Reply] = field(default_factory=list)
    conversation: list[tuple[str, str]] = field(default_factory=list)
    failed: int = 0  # replies not sent because the LLM failed to write them

    def __post_init__(self) -> None:
        rate = self.persona.dropout_per_day
        if rate >= 1:
            self.silent_from = self.started
        elif rate > 0:  # geometric day of drop-out, drawn once so the stream stays aligned
            days = self.rng.expovariate(-math.log1p(-rate))
            self.silent_from = self.started + timedelta(days=days)

    def reply(self, text: str, at: datetime) -> Reply | None:
        """The reply to `text` received `at`, or None (no reply)."""
        persona, rng = self.persona, self.rng
        draws = [rng.random() for _ in range(4)]  # always four: one message, four draws
        if self.writer is not None:  # only an LLM persona reads the conversation back
            self.conversation.append(("bot", text))
        if self.stopped or (self.silent_from is not None and at >= self.silent_from):
            return None
        options = options_in(text)
        asks = bool(options) or bool(ASKS.search(text))
        chance = persona.replies.probability * (1 if asks else persona.replies.statements)
        if draws[0] >= chance:
            return None
        reply = self._scripted(options, self._latency(at, draws[1]), draws)
        if reply.kind == "stop":
            self.stopped = True
        elif reply.kind != "crisis" and self.writer is not None:
            # The scripted reply was drawn all the same, so the stream stays as a scripted
            # persona's; only its text is the LLM's.
            written = self.writer.write(persona, self.conversation)
            if written is None:
                self.failed += 1
                return None
            reply = Reply(written, reply.after, "llm")
        self.said.append(reply)
        if self.writer is not None:
            self.conversation.append(("me", reply.text))
        return reply

    def _scripted(self, options: list[str], after: timedelta, draws: list[float]) -> Reply:
        """The scripted persona's reply: STOP, a crisis line, chatter, or an answer."""
        persona, rng = self.persona, self.rng
        if draws[2] < persona.stop:
            return Reply("STOP", after, "stop")
        if draws[2] < persona.stop + persona.crisis:
            return Reply(rng.choice(persona.crisis_lines), after, "crisis")
        if not options:
            return Reply(rng.choice(persona.chatter), after, "chatter")
        answers, pick = persona.answers, draws[3]
        if pick < answers.invalid:
            wrong = max(int(o) for o in options) + 1 + rng.randrange(5)
            return Reply(str(wrong), after, "invalid")
        if pick < answers.invalid + answers.off_topic:
            return Reply(rng.choice(persona.off_topic_lines), after, "off_topic")
        return Reply(rng.choice(options), after, "answer")

    def _latency(self, at: datetime, draw: float) -> timedelta:
        latency = self.persona.replies.latency
        z = _normal_quantile(min(max(draw, 1e-6), 1 - 1e-6))
        minutes = min(latency.median_minutes * math.exp(latency.spread * z), latency.max_minutes)
        when = at + timedelta(minutes=minutes)
        return _into_hours(when, self.persona) - at


def options_in(text: str) -> list[str]:
    """The valid answers a message asks for: its numbered options ("1. Sleep") or the numbers
    of the last scale it names ("from 0 to 10"); empty when it asks for neither."""
    numbers = [int(m) for m in NUMBERED.findall(text)]
    if numbers:
        return [str(n) for n in numbers]
    scales = [(int(a), int(b)) for a, b in SCALE.findall(text) if int(a) < int(b) <= 100]
    if scales:
        low, high = scales[-1]
        return [str(n) for n in range(low, high + 1)]
    return []


def _into_hours(when: datetime, persona: Persona) -> datetime:
    """`when`, or the next start of the persona's active hours when it falls outside them."""
    zone = ZoneInfo(persona.timezone)
    local = when.astimezone(zone)
    start, end = persona.replies.active_hours
    inside = start <= local.time() < end if start < end else not end <= local.time() < start
    if inside:
        return when
    day = local.date() if local.time() < start else local.date() + timedelta(days=1)
    return datetime.combine(day, start, tzinfo=zone).astimezone(when.tzinfo)


def _normal_quantile(p: float) -> float:
    return NormalDist().inv_cdf(p)
