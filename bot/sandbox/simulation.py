"""`tandem simulate`: a cohort of synthetic participants (bot.sandbox.personas) run on the
real engine (bot.sandbox.cohort: worker, timers, dispatcher to a recording messenger, a fake
clock jumping from one due moment to the next) for some days, and the report read back from
the run's events (bot.sandbox.sim_report). The run's database is kept in the report folder
(or the --database given), so it can be opened in the console and exported like a study's.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.config import Settings
from bot.sandbox import sim_study
from bot.sandbox.cohort import Cohort, CohortError, Delivered, Later
from bot.sandbox.personas import Persona, PersonaError, Player, load_personas
from bot.sandbox.session import locate
from bot.sandbox.sim_study import StudyPlan

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
    llm = sorted(name for name, p in personas.items() if p.kind == "llm")
    if llm:
        raise SimulationError(
            f"LLM personas need an LLM persona player, not built yet (planned): {', '.join(llm)}"
            " - use scripted personas (kind: scripted)"
        )
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
    report.mkdir(parents=True, exist_ok=True)
    if database_url is None:
        path = report / DATABASE
        if path.exists():
            raise SimulationError(f"{path} exists: give a new --report folder")
        database_url = f"sqlite:///{path.resolve()}"
    names = assign(personas, participants, seed)
    players = [
        Player(name, personas[name], random.Random(f"tandem-simulate:{seed}:{n}"), start)
        for n, name in enumerate(names)
    ]
    if study is not None:
        draws = [random.Random(f"tandem-simulate:{seed}:{n}:baseline") for n in range(len(names))]
        baselines = [
            study.baseline(personas[name].baseline, draws[n]) for n, name in enumerate(names)
        ]
        study = replace(study, baselines=baselines)
    cohort = Cohort(
        settings,
        target,
        [Played(p) for p in players],
        start,
        seed=seed,
        timezones=[personas[name].timezone for name in names],
        database_url=database_url,
        keep=True,
        joining=study,
    )
    try:
        cohort.enroll()
        cohort.run_until(start + timedelta(days=days) - END)
    except BaseException:
        cohort.close()
        raise
    return Run(cohort, players, names, personas, start, days, seed, database_url, study)
