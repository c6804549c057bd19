"""The studies a deployment runs: every `studies/<slug>/study.yaml`, validated once against
the interventions catalogue, so that a study that names no arm intervention, or does not
validate, is refused where it is named (the API, `STUDY`, the CLI) and a process does not
start with one."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.interventions.language.loader import load_intervention
from bot.interventions.language.problems import Problem
from bot.interventions.language.types import name_types
from bot.interventions.validation.catalogue import Catalogue
from bot.studies.checks import ArmInterventions
from bot.studies.format import Study
from bot.studies.loader import STUDY as STUDY_FILE
from bot.studies.loader import read_study

STUDIES = Path(__file__).resolve().parents[2] / "studies"


@dataclass
class StudyCatalogue:
    """The studies under `root`, read against the interventions of `interventions`."""

    root: Path
    interventions: Catalogue
    # False: read the studies against the interventions' names only (not loaded, validated or
    # typed): enough to know arms and blinding (an export's), not to enroll or run stage 2.
    typed: bool = True
    _read: dict[str, tuple[Study | None, list[Problem]]] = field(default_factory=dict)
    _blinded: dict[str, bool] = field(default_factory=dict)

    def slugs(self) -> list[str]:
        """Every folder under the root that holds a study.yaml."""
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{STUDY_FILE}"))

    def arm_interventions(self) -> ArmInterventions:
        """The usable interventions, each with its typed names and steps, so that a stage-2
        condition and trigger step are checked against the intervention they run in."""
        if not self.typed:
            return ArmInterventions(frozenset(self.interventions.slugs()))
        slugs = self.interventions.valid()
        loaded = {slug: load_intervention(self.interventions.root / slug) for slug in slugs}
        return ArmInterventions(
            frozenset(slugs),
            names={slug: name_types(i) for slug, i in loaded.items()},
            steps={slug: list(i.steps) for slug, i in loaded.items()},
        )

    def _of(self, slug: str) -> tuple[Study | None, list[Problem]]:
        if slug not in self._read:
            self._read[slug] = read_study(self.root / slug, self.arm_interventions())
        return self._read[slug]

    def problems(self, slug: str) -> list[Problem]:
        """Why `slug` cannot be used (nothing: it exists and validates)."""
        if slug not in self.slugs():
            known = ", ".join(self.slugs()) or "none"
            return [Problem(str(self.root / slug), None, f"no such study; known: {known}")]
        study, problems = self._of(slug)
        if study is None and not problems:
            problems = [Problem(str(self.root / slug / STUDY_FILE), None, "cannot be read")]
        return problems

    def study(self, slug: str) -> Study:
        """The validated study; ValueError with the one-line refusal otherwise."""
        refusal = self.refusal(slug)
        if refusal is not None:
            raise ValueError(refusal)
        study, _ = self._of(slug)
        assert study is not None
        return study

    def blinded(self, slug: str) -> bool:
        """Whether staff are kept from `slug`'s arms; a study that cannot be used counts as
        blinded (too little shown rather than too much)."""
        if slug not in self._blinded:
            self._blinded[slug] = self.refusal(slug) is not None or self.study(slug).blinded
        return self._blinded[slug]

    def refusal(self, slug: str) -> str | None:
        """A one-line reason to refuse `slug` (None: it can be used)."""
        problems = self.problems(slug)
        if not problems:
            return None
        if slug not in self.slugs():
            return f"no study {slug!r}; known: {', '.join(self.slugs()) or 'none'}"
        return (
            f"study {slug!r} does not validate ({len(problems)} problem(s), first: "
            f"{problems[0]}); check it with `tandem study validate {slug}`"
        )

    def startup_problems(self, configured: str | None) -> list[Problem]:
        """Every problem of every study under the root, and of the configured default `STUDY`
        if it names none of them: a process does not start with any."""
        found = [p for slug in self.slugs() for p in self.problems(slug)]
        if configured and configured not in self.slugs():
            found += self.problems(configured)
        return found
