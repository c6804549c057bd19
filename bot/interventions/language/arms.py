"""The study arms that run an intervention, as the intervention sees them: the variables its
conditions and templates read as `arm.<name>` (typed as the studies declare them), each arm's
values, and `arm.name`.

Read from the study files beside the interventions folder (`<root>/../studies/*/study.yaml`)
as plain YAML: the studies are validated by bot.studies (a layer above, which reports their
problems); here a study that cannot be read gives the intervention nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bot.interventions.language.format import FieldSpec

STUDY_FILE = "study.yaml"


@dataclass(frozen=True)
class Arms:
    """`specs[name]`: each declaration of variable `name` by a study running the intervention
    (two studies may declare it differently); `values[(study, arm)]`: what `arm.*` reads for a
    participant of that arm; `names`: every arm that runs it."""

    specs: dict[str, list[FieldSpec]] = field(default_factory=dict)
    values: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    names: tuple[str, ...] = ()

    def of(self, study: str | None, arm: str | None) -> dict[str, Any]:
        """What `arm` holds for a participant: each variable's value (None where the arm
        gives none, or outside a study) and `name`."""
        found = self.values.get((study or "", arm or ""), {})
        return {**{name: found.get(name) for name in self.specs}, "name": arm}


def read_arms(folder: Path) -> Arms:
    """The arms of the studies next to the interventions folder holding `folder` that run
    the intervention in `folder` (named by the folder)."""
    slug = folder.resolve().name
    studies = folder.resolve().parent.parent / "studies"
    specs: dict[str, list[FieldSpec]] = {}
    values: dict[tuple[str, str], dict[str, Any]] = {}
    if not studies.is_dir():
        return Arms()
    for path in sorted(studies.glob(f"*/{STUDY_FILE}")):
        study = _plain(path)
        arms = study.get("arms")
        if not isinstance(arms, dict):
            continue
        running = {
            name: arm
            for name, arm in arms.items()
            if isinstance(arm, dict) and arm.get("intervention") == slug
        }
        if not running:
            continue
        declared = study.get("variables") if isinstance(study.get("variables"), dict) else {}
        for name, raw in (declared or {}).items():
            try:
                specs.setdefault(str(name), []).append(FieldSpec.model_validate(raw))
            except ValidationError:
                continue  # the study's own problem, reported where it is validated
        for name, arm in running.items():
            given = arm.get("variables") if isinstance(arm.get("variables"), dict) else {}
            values[(path.parent.name, str(name))] = dict(given or {})
    names = tuple(sorted({arm for _, arm in values}))
    return Arms(specs, values, names)


def _plain(path: Path) -> dict[str, Any]:
    try:
        found = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return found if isinstance(found, dict) else {}
