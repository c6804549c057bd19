"""Reading a study folder (studies/<slug>/study.yaml) into a Study, or the problems found, each
at file:line. The only part of bot.studies that touches files; the interventions arms may run
are passed in (an ArmInterventions, or just their slugs), never imported."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from bot.interventions.language.intervention import Source
from bot.interventions.language.loader import parse_yaml
from bot.interventions.language.problems import InterventionError, Problem
from bot.studies.checks import ArmInterventions, study_problems
from bot.studies.format import METHODS, Study

STUDY = "study.yaml"


class StudyError(InterventionError):
    """A study that cannot be used; `problems` says why, line by line."""


def load_study(folder: Path | str, interventions: Collection[str] | ArmInterventions) -> Study:
    """The study in `folder`; StudyError lists every problem found reading it."""
    study, problems = read_study(folder, interventions)
    if problems or study is None:
        raise StudyError(problems or [Problem(str(folder), None, "invalid study")])
    return study


def read_study(
    folder: Path | str, interventions: Collection[str] | ArmInterventions
) -> tuple[Study | None, list[Problem]]:
    """The study (None if it cannot be built) and every problem found reading it."""
    path = Path(folder) / STUDY
    if not path.is_file():
        return None, [Problem(str(folder), None, f"no {STUDY} in this folder")]
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except OSError as exc:
        return None, [Problem(str(path), 1, f"cannot read the file: {exc.strerror or exc}")]
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(str(path), line, "not UTF-8 text (save the file as UTF-8)")]
    return parse_study(text, str(path), interventions)


def parse_study(
    text: str, file: str, interventions: Collection[str] | ArmInterventions
) -> tuple[Study | None, list[Problem]]:
    """A study.yaml's text (shown to authors as `file`) read and checked."""
    catalogue = (
        interventions
        if isinstance(interventions, ArmInterventions)
        else ArmInterventions(frozenset(interventions))
    )
    try:
        meta, lines = parse_yaml(text, 1)
    except ValueError as exc:  # the loader's own "unreadable" error carries the line
        return None, [Problem(file, getattr(exc, "line", 1), str(exc))]
    source = Source(file, lines, 1, text=text)
    problems = duplicate_keys(text, file)
    study = _validated(meta, source, problems)
    if study is not None:
        problems += study_problems(study, source, catalogue)
    return study, sorted(set(problems), key=lambda p: (p.line or 0, p.message))


def duplicate_keys(text: str, file: str) -> list[Problem]:
    """A key written twice in one mapping (YAML would silently keep the last one)."""
    problems: list[Problem] = []
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is None:  # an empty file
        return []
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                line = key.start_mark.line + 1
                dotted = f"{where}.{key.value}" if where else str(key.value)
                if key.value in seen:
                    message = f"`{dotted}` is written twice (first at line {seen[key.value]})"
                    problems.append(Problem(file, line, message))
                seen.setdefault(key.value, line)
                stack.append((value, dotted))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{where}.{i}") for i, item in enumerate(node.value))
    return problems


def _validated(meta: dict[str, Any], source: Source, problems: list[Problem]) -> Study | None:
    try:
        return Study.model_validate(meta)
    except ValidationError as exc:
        for error in exc.errors(include_url=False, include_input=False):
            loc = _written(source, tuple(error["loc"]))
            where = ".".join(str(part) for part in loc)
            message = error["msg"].removeprefix("Value error, ")
            known = ", ".join(METHODS)
            if error["type"] == "extra_forbidden":
                message = f"unknown key `{where}`"
            elif error["type"] == "missing":
                message = f"`{where}` is required"
            elif error["type"] == "union_tag_invalid":
                tag = (error.get("ctx") or {}).get("tag")
                loc = (*loc, "method")
                message = f"`{where}.method`: unknown method {tag!r}; known: {known}"
            elif error["type"] == "union_tag_not_found":
                message = f"`{where}.method` is required (one of {known})"
            elif "ratio" in loc and error["type"] in ("greater_than_equal", "int_parsing"):
                message = f"`{where}`: a ratio is a whole number, 1 or more (an arm nobody "
                message += "would join is no arm: remove it)"
            elif where:
                message = f"`{where}`: {message}"
            problems.append(Problem(source.file, source.line(*loc), message))
        return None


def _written(source: Source, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The error's place as the author wrote it: the parts pydantic adds (the method's tag of
    an allocation) are left out when the file has no such key there."""
    path: tuple[Any, ...] = ()
    for index, part in enumerate(loc):
        tag = part in METHODS and index > 0 and loc[index - 1] == "allocation"
        if not (tag and (*path, part) not in source.lines):
            path = (*path, part)
    return path
