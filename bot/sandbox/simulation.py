"""`tandem simulate`: a cohort of synthetic participants (bot.sandbox.personas) run on the
real engine (bot.sandbox.cohort: worker, timers, dispatcher to a recording messenger, a fake
clock jumping from one due moment to the next) for some days, and the report read back from
the run's events (bot.sandbox.sim_report). The run's database is kept in the report folder
(or the --database given), so it can be opened in the console and exported like a study's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.core.config import Settings
from bot.sandbox import persona_llm, sim_study, whatsapp_window
from bot.sandbox.cohort import Cohort, CohortError, Delivered, Later
from bot.sandbox.personas import Persona, PersonaError, Player, load_personas
from bot.sandbox.session import locate
from bot.sandbox.sim_study import StudyPlan
from bot.sandbox.sim_timing import TurnTime, time_turns

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday morning: runs repeat from the same
DATABASE = "simulation.db"
END = timedelta(seconds=1)  # the run covers [start, start + days): whole days, nothing after


class SimulationError(CohortError):
    """A simulation that cannot be run as asked; the message says why."""


@dataclass
class Played:
    """The cohort's view of one player: each message in, the reply (if any) later."""

    player: Player

    def receive(self, message: Delivered) -> Later | None:
        reply = self.player.reply(message.text, message.at)
        return None if reply is None else Later(reply.text, message.at + reply.after)


def assign(personas: dict[str, Persona], participants: int, seed: int) -> list[str]:
    """Which persona plays each participant: counts by weight (largest remainder, ties by
    name), shuffled by the seed, so every persona with weight plays when N allows."""
    total = sum(p.weight for p in personas.values())
    if total <= 0:
        raise SimulationError("every persona has weight 0: nobody to simulate")
    shares = {name: participants * p.weight / total for name, p in personas.items()}
    counts = {name: int(share) for name, share in shares.items()}
    left = participants - sum(counts.values())
    for name in sorted(shares, key=lambda n: (-(shares[n] - counts[n]), n))[:left]:
        counts[name] += 1
    names = [name for name in sorted(counts) for _ in range(counts[name])]
    random.Random(f"tandem-simulate:{seed}").shuffle(names)
    return names


@dataclass(frozen=True)
class Run:
    """What a simulation did: the cohort (closed; its database kept), who played whom."""

    cohort: Cohort
    players: list[Player]
    names: list[str]
    personas: dict[str, Persona]
    start: datetime
    days: int
    seed: int
    database_url: str
    turns: list[TurnTime] = field(default_factory=list)  # wall time of each turn (timings.json)
    writers: dict[str, persona_llm.PersonaWriter] = field(default_factory=dict)  # LLM personas'
    study: StudyPlan | None = None


def simulate(  # noqa: PLR0913 - the command's options
    settings: Settings,
    target: str,
    personas_folder: Path,
    *,
    participants: int,
    days: int,
    seed: int,
    report: Path,
    database_url: str | None = None,
    start: datetime = START,
) -> Run:
    """Run the simulation; the report is written by the caller (bot.sandbox.sim_report)."""
    if participants < 1 or days < 1:
        raise SimulationError("--participants and --days must be 1 or more")
    study = sim_study.plan(target, settings, seed) if sim_study.folder_of(target) else None
    try:
        personas = load_personas(personas_folder)
    except PersonaError as exc:
        lines = "\n".join(str(p) for p in exc.problems)
        raise SimulationError(f"personas cannot be used:\n{lines}") from None
    refused = persona_llm.no_llm_for_personas(settings, personas)
    if refused:
        raise SimulationError(refused)
    if study is not None:
        fixed = [
            p
            for name, persona in personas.items()
            for p in study.persona_problems(name, persona.baseline)
        ]
        if fixed:
            raise SimulationError("personas cannot be used:\n" + "\n".join(fixed))
        settings, target = study.settings, study.interventions[0]
    locate(target)  # an unknown intervention is refused before anything is written
    engine, refused = persona_llm.engine_llm(settings, target)
    if refused:
        raise SimulationError(refused)
    report.mkdir(parents=True, exist_ok=True)
    if database_url is None:
        path = report / DATABASE
        if path.exists():
            if engine is not None:
                engine.close()
            raise SimulationError(f"{path} exists: give a new --report folder")
        database_url = f"sqlite:///{path.resolve()}"
    names = assign(personas, participants, seed)
    writers = persona_llm.persona_writers(settings, personas)
    players = [
        Player(
            name,
            personas[name],
            random.Random(f"tandem-simulate:{seed}:{n}"),
            start,
            writer=writers.get(name),
            whatsapp=on_whatsapp(personas[name], seed, n),
        )
        for n, name in enumerate(names)
    ]
    if study is not None:
        draws = [random.Random(f"tandem-simulate:{seed}:{n}:baseline") for n in range(len(names))]
        baselines = [
            study.baseline(personas[name].baseline, draws[n]) for n, name in enumerate(names)
        ]
        study = replace(study, baselines=baselines)
    channels = ["whatsapp" if p.whatsapp else "sms" for p in players]
    if "whatsapp" in channels:
        settings = whatsapp_window.with_template(settings, target)
    try:
        cohort = Cohort(
            settings,
            target,
            [Played(p) for p in players],
            start,
            seed=seed,
            timezones=[personas[name].timezone for name in names],
            channels=channels,
            database_url=database_url,
            keep=True,
            llm=engine,
            joining=study,
        )
    except BaseException:
        _close(engine, writers)
        raise
    turns = time_turns(cohort)
    try:
        cohort.enroll()
        cohort.run_until(start + timedelta(days=days) - END)
    except BaseException:
        cohort.close()
        raise
    finally:
        _close(None, writers)
    return Run(
        cohort, players, names, personas, start, days, seed, database_url, turns, writers, study
    )


def on_whatsapp(persona: Persona, seed: int, n: int) -> bool:
    """Whether participant n texts on WhatsApp: drawn with the persona's `whatsapp` chance from
    a stream of its own (the replies' streams stay as they were)."""
    if persona.whatsapp <= 0:
        return False
    return random.Random(f"tandem-simulate:{seed}:{n}:channel").random() < persona.whatsapp


def _close(engine: Any, writers: dict[str, persona_llm.PersonaWriter]) -> None:
    """Close the LLM clients opened for the run (the cohort closes the engine's once built)."""
    if engine is not None:
        engine.close()
    for client in {id(w.client): w.client for w in writers.values()}.values():
        client.close()
