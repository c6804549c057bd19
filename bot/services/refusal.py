"""`Refused`: an act that cannot be carried out, with a reason a person can read."""

from __future__ import annotations

from typing import Literal

Kind = Literal["invalid", "conflict", "not_found"]


class Refused(Exception):
    """Why an act was not carried out: `message` for a person, the `field` it concerns (if
    one), and its `kind` (an invalid request, a conflict with the current state, or nothing
    to act on), which each entry point maps to its own form (an HTTP status, a form error, a
    CLI exit). `problems` holds every field's problem when several were checked at once."""

    def __init__(
        self,
        message: str,
        field: str | None = None,
        kind: Kind = "invalid",
        problems: dict[str, str] | None = None,
    ) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.message = message
        self.field = field
        self.kind = kind
        self.problems = problems if problems is not None else ({field: message} if field else {})
