"""Simulating a study (`tandem simulate studies/<slug>`): each synthetic participant joins
through the study part of the enrollment service (bot.services.study_joining: the baseline
checked against the study's fields) and is recorded by `enrollment.record`, which draws the arm
as it does for the API and the console (blocks, strata, minimisation, stage 2), so each arm's
intervention runs.

Baseline values come from the participant's own seeded stream (a choice: one of its options,
an int or number: within its bounds, a bool: either), unless their persona fixes some
(`baseline:`, checked against the study). The allocation sequence is the simulation's own:
the run's TANDEM_MASTER_KEY is `tandem-simulation-master-key-<seed as 8 digits>`, never the
deployment's, so the arms a simulation shows reveal nothing of the real study's concealed
sequence (and the run's database opens with that key).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.config import Settings
from bot.interventions.language.format import FieldSpec
from bot.runtime.routing import intervention_catalogue
from bot.sandbox.cohort import CohortError
from bot.services import enrollment
from bot.services.study_joining import joined
from bot.store.event_types import ParticipantEnrolled
from bot.studies.baseline import field_problems
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import Study
from bot.studies.loader import STUDY
from modules.step import INTERVENTIONS

LOW, HIGH = 0, 100  # the range of an int or number field declared without bounds


def folder_of(target: str) -> Path | None:
    """The study folder `target` names (`studies/<slug>`, a path, or a slug with a
    studies/<slug>/study.yaml), or None for an intervention."""
    folder = Path(target) if "/" in target else Path("studies") / target
    return folder.resolve() if (folder / STUDY).is_file() else None


def simulation_key(seed: int) -> str:
    """The run's master key: the allocation seed, decision draws and sealing of a study's
    simulation follow from it (and from nothing of the deployment's)."""
    return f"tandem-simulation-master-key-{seed:08d}"


@dataclass(frozen=True)
class StudyPlan:
    """A study ready to be simulated: its design, and the settings its enrollments use."""

    slug: str
    design: Study
    studies: StudyCatalogue
    settings: Settings
    baselines: list[dict[str, Any]] = field(default_factory=list)  # participant n's

    @property
    def interventions(self) -> list[str]:
        """Each arm's intervention, once, in the order of the arms."""
        return list(dict.fromkeys(arm.intervention for arm in self.design.arms.values()))

    def baseline(self, fixed: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
        """A participant's baseline: `fixed` (their persona's), the rest drawn from `rng`."""
        return {
            name: fixed[name] if name in fixed else draw(spec, rng)
            for name, spec in self.design.baseline.items()
        }

    def join(self, n: int, enrolled: ParticipantEnrolled) -> enrollment.Checked:
        """Participant n's enrollment, with their baseline (`baselines[n]`)."""
        return self.checked(enrolled, self.baselines[n])

    def checked(
        self, enrolled: ParticipantEnrolled, baseline: Mapping[str, Any]
    ) -> enrollment.Checked:
        """The enrollment `record` allocates: the study's joining rules applied to `baseline`."""
        problems: dict[str, str] = {}
        design, seed, values = joined(
            baseline, False, self.slug, self.settings, self.studies, problems
        )
        if problems or design is None:
            lines = "; ".join(f"{k}: {v}" for k, v in problems.items())
            raise CohortError(f"study {self.slug!r} refused a simulated enrollment: {lines}")
        return enrollment.Checked(enrolled, self.slug, design, seed, values)

    def persona_problems(self, persona: str, fixed: Mapping[str, Any]) -> list[str]:
        """What is wrong with `persona`'s `baseline:` for this study (its own fields only)."""
        wrong = field_problems(self.design, fixed)
        return [
            f"persona {persona}: baseline.{name}: {why}"
            for name, why in wrong.items()
            if name in fixed or name not in self.design.baseline
        ]


def plan(target: str, settings: Settings, seed: int) -> StudyPlan:
    """The study `target` names, checked: it validates, and every arm's intervention can run
    here (an arm that needs an LLM is refused, not played without one)."""
    folder = folder_of(target)
    assert folder is not None, "plan() is for a study folder"
    catalogue = intervention_catalogue(INTERVENTIONS)
    studies = StudyCatalogue(folder.parent, catalogue)
    refusal = studies.refusal(folder.name)
    if refusal is not None:
        raise CohortError(refusal)
    design = studies.study(folder.name)
    for name, arm in design.arms.items():
        unmet = enrollment.unmet_needs(catalogue, arm.intervention, settings, "sms")
        if unmet is not None:
            raise CohortError(f"arm {name!r} cannot be simulated here: {unmet}")
    own = settings.model_copy(update={"master_key": simulation_key(seed)})
    return StudyPlan(folder.name, design, studies, own)


def draw(spec: FieldSpec, rng: random.Random) -> Any:
    """A value of the field's type, drawn from `rng`."""
    if spec.type == "choice":
        return rng.choice(sorted(spec.choices()))
    if spec.type == "bool":
        return rng.random() < 0.5
    low = spec.min if spec.min is not None else LOW
    high = spec.max if spec.max is not None else max(HIGH, low)
    if spec.type == "int":
        return rng.randint(int(low), int(high))
    if spec.type == "number":
        return round(rng.uniform(low, high), 2)
    raise CohortError(
        f"a baseline field of type {spec.type} cannot be drawn: fix it in the personas' `baseline:`"
    )
