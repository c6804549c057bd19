"""Exports: who took which data out of the system, when, and in what form."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from bot.store.events import EventData, event, fields


@event("export.written")
class ExportWritten(EventData):
    """An export was written (on the system stream; `meta.actor` says who made it)."""

    personal = fields()
    plain = fields("files", "arms")

    # md or json: the codebook alone, downloaded from the researcher console.
    format: Literal["csv", "jsonl", "md", "json"]
    files: list[str]
    pseudonymised: bool
    free_text: Literal["keep", "drop"]
    since: datetime | None = None
    participant_ids: list[str] = []
    participants: int
    messages: int
    events: int
    # How a blinded study's arms were shown: by name (operator `--unblinded`, or no blinded
    # study), as codes (admins, statisticians, `tandem export`), or omitted (researchers).
    arms: Literal["names", "codes", "omitted"] = "names"
