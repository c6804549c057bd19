"""What a pseudonymised export does to free text: a participant's own names (the name given at
enrollment and any profile field named as a name: `name`, `first_name`, `nickname`, ...),
their phone number, and any phone number or e-mail address, each replaced by a marker
(`[name]`, `[phone]`, `[email]`). Made per participant from their row, and used only when an
export is pseudonymised: its cost is never paid otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# A phone number: 8 to 15 digits, with spaces, dots, dashes or brackets between them, not part
# of a longer run of word characters; an ISO date (2026-01-31) is not one.
PHONE = re.compile(r"(?<!\w)(?!\d{4}-\d{2}-\d{2}(?!\d))\+?\(?\d(?:[\s().-]{0,2}\d){7,14}(?!\w)")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A profile field that holds a name (its key ends in `name`: name, first_name, surname, ...).
NAME_FIELD = re.compile(r"name$", re.IGNORECASE)
# The parts of a name worth looking for on their own (shorter ones match ordinary words).
_SHORTEST_PART = 3
# What each file's records hold of free text (bot.reporting.export's shapes).
FREE_TEXT_COLUMNS = {
    "participants": ("background", "profile", "notes", "judgements", "withdrawn_reason")
    + ("erased_reason",),
    "messages": ("text", "error_message"),
    "results": ("value", "value_label"),
    "retrievals": ("query",),
    "forms": ("value",),
    "evaluations": ("comment",),
}


@dataclass(frozen=True)
class Redactor:
    """One participant's redaction: `names` (a pattern of their names and their parts, or
    None) and their phone number's digits."""

    names: re.Pattern[str] | None
    phone: str

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Redactor:
        """The redactor of a participants row (its `name`, `phone` and `profile`)."""
        known = [row.get("name")]
        profile = row.get("profile")
        if isinstance(profile, dict):
            known += [v for k, v in profile.items() if NAME_FIELD.search(str(k))]
        names = names_pattern(v for v in known if isinstance(v, str) and v != "[erased]")
        return cls(names, str(row.get("phone") or ""))

    def text(self, text: str) -> str:
        """`text` with names, phone numbers and e-mail addresses replaced."""
        text = EMAIL.sub("[email]", text)  # first: an address may hold a name
        text = PHONE.sub("[phone]", text)
        digits = self.phone.lstrip("+")
        if len(digits) >= 8 and digits in text:
            text = text.replace(digits, "[phone]")
        if self.names is not None:
            text = self.names.sub("[name]", text)
        return text

    def value(self, value: Any) -> Any:
        """`value` with every text in it (inside lists and objects too) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def record(self, file: str, record: dict[str, Any]) -> dict[str, Any]:
        """A record of `file` with its free-text columns redacted; messages' media (provider
        URLs name the message) each `[media]`."""
        found = {c: self.value(record[c]) for c in FREE_TEXT_COLUMNS.get(file, ()) if c in record}
        if file == "messages" and record.get("media"):
            found["media"] = ["[media]"] * len(record["media"])
        return {**record, **found} if found else record


def names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    """A case-blind pattern of whole names and of each of their parts of 3 letters or more,
    longest first (so `Alice Tremblay` goes whole, and `Alice` alone too)."""
    wanted: set[str] = set()
    for name in names:
        name = " ".join(name.split())
        if len(name) >= _SHORTEST_PART:
            wanted.add(name)
        wanted.update(p for p in re.split(r"[\s,.-]+", name) if len(p) >= _SHORTEST_PART)
    if not wanted:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(wanted, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
