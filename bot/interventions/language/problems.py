"""What is wrong with an intervention, said for its author: the file, the line, the problem."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal

Level = Literal["error", "warning"]  # an error stops an intervention; a warning lets it run


@dataclass(frozen=True, order=True)
class Problem:
    """One problem of an intervention; `line` is 1-based in `file`, None if unknown. An
    `error` stops it from running; a `warning` is shown to its author and lets it run."""

    file: str
    line: int | None
    message: str
    level: Level = "error"

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        said = "warning: " if self.level == "warning" else ""
        return f"{where}: {said}{self.message}"


def errors(problems: Iterable[Problem]) -> list[Problem]:
    """The problems that stop an intervention from running (warnings aside)."""
    return [problem for problem in problems if problem.level == "error"]


class InterventionError(ValueError):
    """An intervention that cannot be used; `problems` says why, file by file."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = sorted(set(problems), key=lambda p: (p.file, p.line or 0, p.message))
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid intervention")


def unknown(kind: str, name: str, known: Collection[str]) -> str:
    """ "no judgement 'engagd'; did you mean 'engaged'?" (or the known names)."""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    if close:
        return f"no {kind} {name!r}; did you mean {close[0]!r}?"
    return f"no {kind} {name!r}; known: {', '.join(sorted(known)) or 'none'}"
