"""The cross-checks of a study that its pydantic models cannot make alone (arms against
interventions, ratios against arms, strata and factors against baseline fields, arm variables
against their types, the stage-2 condition, declared broadcasts against arms, profile fields,
steps and Jinja2), each said at the line of study.yaml concerned."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from bot.interventions.language.expressions import ConditionError, compile_condition
from bot.interventions.language.intervention import Source
from bot.interventions.language.problems import Problem
from bot.interventions.language.typecheck import condition_type_problems
from bot.interventions.language.types import Type, value_problem
from bot.studies.format import AllocationMethod, Blocks, Minimisation, Stratified, Study
from bot.studies.stage2 import (
    CONDITION_ROOTS,
    STUDY_ROOTS,
    field_type,
    first_arms,
    merged,
    study_types,
)

ARM_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # read in conditions as baseline.<name>
CATEGORICAL = ("choice", "bool")


@dataclass(frozen=True)
class ArmInterventions:
    """What the loader knows of the interventions: their slugs and, where given, the typed
    names a stage-2 condition may read and their step names (unchecked where not given)."""

    slugs: frozenset[str]
    names: Mapping[str, Mapping[str, Type]] = field(default_factory=dict)
    steps: Mapping[str, Collection[str]] = field(default_factory=dict)


def study_problems(study: Study, source: Source, catalogue: ArmInterventions) -> list[Problem]:
    """Every problem of a study whose keys and types are already valid."""
    checks = _Checks(study, source, catalogue)
    checks.names()
    checks.arms()
    checks.method(study.allocation, ("allocation",), stage2=False)
    if study.stage2 is not None:
        checks.method(study.stage2.allocation, ("stage2", "allocation"), stage2=True)
        checks.stage2()
    checks.unused_arms()
    checks.broadcasts()
    return checks.problems


class _Checks:
    def __init__(self, study: Study, source: Source, catalogue: ArmInterventions) -> None:
        self.study, self.source, self.catalogue = study, source, catalogue
        self.problems: list[Problem] = []

    def say(self, path: tuple[Any, ...], message: str) -> None:
        self.problems.append(Problem(self.source.file, self.source.line(*path), message))

    def names(self) -> None:
        for arm in self.study.arms:
            if not ARM_NAME.match(arm):
                self.say(("arms", arm), f"the arm name {arm!r} must use a-z, 0-9, - and _")
        for group in ("baseline", "variables"):
            for name in getattr(self.study, group):
                if not FIELD_NAME.match(name):
                    self.say((group, name), f"the name {name!r} must use a-z, 0-9 and _")
        if "name" in self.study.variables:
            self.say(("variables", "name"), "`arm.name` is the arm's own name: choose another")

    def arms(self) -> None:
        if len(self.study.arms) < 2:
            self.say(("arms",), "a study needs at least two arms")
        for arm, spec in self.study.arms.items():
            if spec.intervention not in self.catalogue.slugs:
                close = difflib.get_close_matches(spec.intervention, self.catalogue.slugs, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                message = f"arm `{arm}` runs {spec.intervention!r}, which is no intervention{hint}"
                self.say(("arms", arm, "intervention"), message)
            for name, value in spec.variables.items():
                declared = self.study.variables.get(name)
                where = ("arms", arm, "variables", name)
                if declared is None:
                    self.say(where, f"arm `{arm}`: `{name}` is not declared under `variables:`")
                elif (wrong := value_problem(value, field_type(declared))) is not None:
                    self.say(where, f"arm `{arm}`: variable `{name}`: {wrong}")
            for name, declared in self.study.variables.items():
                if name not in spec.variables and not declared.optional:
                    message = f"arm `{arm}` gives no value for the variable `{name}`"
                    self.say(("arms", arm), message + " (or declare it `optional: true`)")

    def method(self, method: AllocationMethod, at: tuple[str, ...], stage2: bool) -> None:
        what = "stage-2 option" if stage2 else "the ratio's arm"
        for arm in method.ratio:
            if arm not in self.study.arms:
                self.say((*at, "ratio", arm), f"{what} `{arm}` names no arm under `arms:`")
        if len(method.ratio) < 2:
            self.say((*at, "ratio"), "a ratio needs at least two arms to randomise between")
        total = sum(method.ratio.values())
        if isinstance(method, Blocks | Stratified):
            for i, size in enumerate(method.block_sizes):
                if size % total:
                    message = f"block size {size} is not a multiple of the ratio's sum ({total})"
                    self.say((*at, "block_sizes", i), message)
                if size in method.block_sizes[:i]:
                    self.say((*at, "block_sizes", i), f"block size {size} is listed twice")
        if isinstance(method, Stratified):
            self.categorical(method.strata, (*at, "strata"), "stratum field")
        if isinstance(method, Minimisation):
            self.categorical(method.factors, (*at, "factors"), "minimisation factor")

    def categorical(self, names: list[str], at: tuple[str, ...], what: str) -> None:
        for i, name in enumerate(names):
            spec = self.study.baseline.get(name)
            if spec is None:
                self.say((*at, i), f"{what} `{name}` is not a declared baseline field")
            elif spec.type not in CATEGORICAL:
                message = f"{what} `{name}` is {spec.type}: only a choice or bool field has "
                self.say((*at, i), message + "few enough values (declare a choice)")
            elif spec.optional:
                self.say((*at, i), f"{what} `{name}` is optional: every participant needs one")
            if name in names[:i]:
                self.say((*at, i), f"{what} `{name}` is listed twice")

    def stage2(self) -> None:
        stage2 = self.study.stage2
        assert stage2 is not None
        for i, arm in enumerate(stage2.after or ()):
            if arm not in self.study.allocation.ratio:
                self.say(("stage2", "after", i), f"`{arm}` is no stage-1 arm (see the ratio)")
        slugs = {
            self.study.arms[a].intervention for a in first_arms(self.study) if a in self.study.arms
        }
        if stage2.at.step is not None:
            for slug in sorted(slugs):
                steps = self.catalogue.steps.get(slug)
                if steps is not None and stage2.at.step not in steps:
                    message = f"stage 2's step `{stage2.at.step}` is no step of {slug!r}"
                    self.say(("stage2", "at", "step"), message)
        try:
            condition = compile_condition(stage2.when, CONDITION_ROOTS)
        except ConditionError as exc:
            self.say(("stage2", "when"), f"`stage2.when`: {exc}")
            return
        known = all(slug in self.catalogue.names for slug in slugs)
        types = merged(
            [self.catalogue.names[s] for s in sorted(slugs) if s in self.catalogue.names]
        )
        types |= study_types(self.study)
        for name in sorted(condition.names()):
            checked = known or name.split(".")[0] in STUDY_ROOTS
            if checked and name not in types and not any(t.startswith(name + ".") for t in types):
                self.say(("stage2", "when"), f"`stage2.when`: unknown name `{name}`")
        for message in condition_type_problems(condition, types):
            self.say(("stage2", "when"), f"`stage2.when`: {message}")

    def unused_arms(self) -> None:
        used = set(self.study.allocation.ratio)
        if self.study.stage2 is not None:
            used |= set(self.study.stage2.allocation.ratio)
        for arm in self.study.arms:
            if arm not in used:
                self.say(("arms", arm), f"arm `{arm}` is in no ratio: nobody would be allocated")

    def broadcasts(self) -> None:
        for name, declared in self.study.broadcasts.items():
            at: tuple[Any, ...] = ("broadcasts", name)
            if not ARM_NAME.match(name):
                self.say(at, f"the broadcast name {name!r} must use a-z, 0-9, - and _")
            arm = declared.filter.arm
            if arm is not None and arm not in self.study.arms:
                known = ", ".join(self.study.arms)
                self.say(
                    (*at, "filter", "arm"), f"broadcast `{name}`: no arm `{arm}`; arms: {known}"
                )
                continue
            arms = [arm] if arm else list(self.study.arms)
            slugs = sorted({self.study.arms[a].intervention for a in arms})
            if declared.step is not None:
                for slug in slugs:
                    steps = self.catalogue.steps.get(slug)
                    if steps is not None and declared.step not in steps:
                        message = f"broadcast `{name}`: no step `{declared.step}` in {slug!r}"
                        self.say((*at, "step"), message)
            if declared.message is not None:
                try:
                    _TEMPLATES.parse(declared.message)
                except jinja2.TemplateSyntaxError as exc:
                    message = f"broadcast `{name}`: the message, line {exc.lineno}: {exc.message}"
                    self.say((*at, "message"), message)
            if declared.filter.condition:
                self.broadcast_condition(name, declared.filter.condition, slugs)

    def broadcast_condition(self, name: str, source: str, slugs: list[str]) -> None:
        at = ("broadcasts", name, "filter", "condition")
        try:
            condition = compile_condition(source, ("profile",))
        except ConditionError as exc:
            self.say(at, f"broadcast `{name}`: `{source}`: {exc}")
            return
        if not all(slug in self.catalogue.names for slug in slugs):
            return  # the interventions' names are not known here: checked when it is made
        tables = [self.catalogue.names[s] for s in slugs]
        types = {k: v for k, v in merged(tables).items() if k.startswith("profile.")}
        for unknown in sorted(n for n in condition.names() if n not in types):
            known = ", ".join(sorted(types)) or "none"
            self.say(at, f"broadcast `{name}`: unknown name `{unknown}`; profile fields: {known}")
        for message in condition_type_problems(condition, types):
            self.say(at, f"broadcast `{name}`: {message}")


_TEMPLATES = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
