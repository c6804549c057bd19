"""Reading instruments: one `instruments/<name>.yaml` file, or a folder of them (the
researcher's own, beside `interventions/`, or the shipped library at the repository's top
level). The only part of the package that touches files. Problems are collected as
`file:line: message` (bot.interventions.language.problems) rather than raised one by one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.instruments.checks import instrument_problems
from bot.instruments.format import Instrument
from bot.instruments.wording import errors_in_authors_words
from bot.instruments.yaml_text import YamlSyntaxError, line_of, read_yaml
from bot.interventions.language.problems import InterventionError, Problem

SHIPPED = Path(__file__).resolve().parents[2] / "instruments"
NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # instruments.<name> in conditions


def load_instrument(path: Path | str) -> Instrument:
    """The instrument in `path`; InterventionError lists every problem found reading it."""
    instrument, problems = read_instrument(path)
    if problems or instrument is None:
        raise InterventionError(problems)
    return instrument


def load_instruments(folder: Path | str = SHIPPED) -> dict[str, Instrument]:
    """Every instrument in `folder` by name; InterventionError lists every problem."""
    instruments, problems = read_instruments(folder)
    if problems:
        raise InterventionError(problems)
    return instruments


def read_instruments(folder: Path | str) -> tuple[dict[str, Instrument], list[Problem]]:
    """Each readable instrument in `folder` (`<name>.yaml` or `.yml`) by name, and the
    problems of all of them."""
    base = Path(folder)
    if not base.is_dir():
        return {}, [Problem(str(base), None, "no such folder")]
    instruments: dict[str, Instrument] = {}
    problems: list[Problem] = []
    for path in sorted([*base.glob("*.yaml"), *base.glob("*.yml")]):
        if path.stem in instruments:
            problems.append(Problem(str(path), None, f"instrument {path.stem!r} is written twice"))
            continue
        instrument, found = read_instrument(path)
        problems += found
        if instrument is not None and not found:
            instruments[path.stem] = instrument
    return instruments, problems


def read_instrument(path: Path | str) -> tuple[Instrument | None, list[Problem]]:
    """The instrument (None if it cannot be built) and every problem found in the file."""
    file, path = str(path), Path(path)
    problems: list[Problem] = []
    if not NAME.match(path.stem):
        problems.append(
            Problem(
                file,
                None,
                f"the file name {path.stem!r} must start with a "
                "letter and use only a-z, 0-9 and _ (it is a name in conditions)",
            )
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        return None, [*problems, Problem(file, None, f"cannot read the file: {exc.strerror}")]
    except UnicodeDecodeError:
        return None, [*problems, Problem(file, None, "not UTF-8 text (save the file as UTF-8)")]
    try:
        data, lines, slips = read_yaml(text)
    except YamlSyntaxError as exc:
        return None, [*problems, Problem(file, exc.line, str(exc))]
    problems += [Problem(file, line, message) for line, message in slips]
    if not isinstance(data, dict):
        return None, [
            *problems,
            Problem(file, 1, "expected `key: value` lines (title, citation, items, ...)"),
        ]
    instrument = _validated(data, lines, file, problems)
    if instrument is None:
        return None, problems
    for key_path, message in instrument_problems(instrument):
        problems.append(Problem(file, _line(lines, key_path), message))
    return (None if problems else instrument), problems


def _validated(
    data: dict[str, Any], lines: dict[tuple[str, ...], int], file: str, into: list[Problem]
) -> Instrument | None:
    try:
        return Instrument.model_validate(data)
    except ValidationError as exc:
        for key_path, message in errors_in_authors_words(exc.errors(include_url=False), data):
            into.append(Problem(file, _line(lines, key_path), message))
        return None


def _line(lines: dict[tuple[str, ...], int], path: tuple[Any, ...]) -> int | None:
    """The line of a key path; a subscale written as a bare list has no `items` key."""
    parts = tuple(str(part) for part in path)
    if parts[:2] == ("scoring", "subscales") and parts[3:4] == ("items",):
        if parts[:4] not in lines:
            parts = (*parts[:3], *parts[4:])
    return line_of(lines, parts)
