"""A study's baseline fields as the console's enrollment form inputs (a choice is a select, an
int or number a number input, a bool a checkbox, a date or time its own input), and the
studies the console enrolls in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from flask import current_app

from bot.instruments.administration import attach
from bot.interventions.validation.catalogue import Catalogue
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.studies.format import Study

PREFIX = "baseline."  # a baseline input's name in the form, and its problem's key
KINDS = {"choice": "select", "int": "number", "number": "number", "bool": "checkbox"}
KINDS |= {"date": "date", "time": "time"}


@dataclass(frozen=True)
class Input:
    """One input of the form: `name` is the baseline field's."""

    name: str
    label: str
    kind: str  # select, number, checkbox, date, time or text
    options: tuple[tuple[str, str], ...] = ()
    min: float | None = None
    max: float | None = None
    step: str = "1"
    optional: bool = False


def inputs(study: Study) -> list[Input]:
    """The inputs of the study's baseline fields, in the study's order."""
    made = []
    for name, spec in study.baseline.items():
        label = spec.description or name.replace("_", " ").capitalize()
        if spec.unit:
            label += f" ({spec.unit})"
        if spec.type == "list":
            label += " (separate items with ;)"
        options = tuple((code, meaning or code) for code, meaning in spec.choices().items())
        made.append(
            Input(
                name=name,
                label=label,
                kind=KINDS.get(spec.type, "text"),
                options=options,
                min=spec.min,
                max=spec.max,
                step="1" if spec.type == "int" else "any",
                optional=spec.optional,
            )
        )
    return made


def given_baseline(study: Study | None, form: Mapping[str, str]) -> dict[str, str]:
    """The baseline a form posted, as text: an unticked checkbox is "no"."""
    if study is None:
        return {}
    given = {name: form.get(PREFIX + name, "") for name in study.baseline}
    for name, spec in study.baseline.items():
        if spec.type == "bool":
            given[name] = "yes" if form.get(PREFIX + name) else "no"
    return given


def interventions() -> Catalogue:
    """The interventions this app enrolls in: the API's catalogue, or the console's folder."""
    found = current_app.extensions.get("tandem.interventions")
    if isinstance(found, Catalogue):
        return found
    return Catalogue(current_app.extensions["tandem_console"]["interventions"], attach=attach)


def studies(interventions: Catalogue) -> StudyCatalogue:
    """The studies of this app: the API's catalogue, or those under studies/."""
    found = current_app.extensions.get("tandem.studies")
    if isinstance(found, StudyCatalogue):
        return found
    return StudyCatalogue(STUDIES, interventions)


def usable(catalogue: StudyCatalogue) -> list[str]:
    """The studies one may enroll in (those that validate)."""
    return [slug for slug in catalogue.slugs() if catalogue.refusal(slug) is None]
