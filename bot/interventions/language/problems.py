"""What is wrong with an intervention, said for its author: the file, the line, the problem."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One error in an intervention; `line` is 1-based in `file`, None if unknown."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


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
