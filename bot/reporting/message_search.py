"""A linear scan of transcripts for a piece of message text, opened in this process.

Message text is sealed per participant and never indexed in plaintext at rest; the caller
decides whose transcripts may be scanned (bot.console.message_search).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.reporting.transcript import TranscriptLine, read_lines
from bot.store.event_store import EventStore

MAX_MATCHES = 200


@dataclass(frozen=True)
class Match:
    participant_id: str
    line: TranscriptLine


def scan(
    store: EventStore, ids: list[str], needle: str, limit: int = MAX_MATCHES
) -> tuple[list[Match], bool]:
    """Lines whose text contains `needle` (case-insensitive) in the transcripts of `ids`, up
    to `limit`, and whether more were left unlisted."""
    folded = needle.casefold()
    found: list[Match] = []
    for participant_id in ids:
        for line in read_lines(store, participant_id):
            if line.text and folded in line.text.casefold():
                if len(found) == limit:
                    return found, True
                found.append(Match(participant_id, line))
    return found, False
