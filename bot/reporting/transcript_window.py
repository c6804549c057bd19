"""The transcript shown on a participant's page: one page of messages, paged by message seq.

The newest page follows the conversation live; `before`/`after` pages (older and newer links
that work without JavaScript) hold still, so a researcher can read back to the first message.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.reporting.transcript import LINE_TYPES, TranscriptLine, read_page
from bot.store.event_store import EventStore
from bot.store.reads.participant_page import last_seqs

PAGE = 100


@dataclass(frozen=True)
class Window:
    """A page of transcript lines (oldest first) and the cursors of the pages beside it."""

    lines: list[TranscriptLine]
    older: int | None  # `before` of the older page, None at the first message
    newer: int | None  # `after` of the newer page, None when this is the newest page
    live: bool  # the newest page, refreshed as messages arrive


def cursor(value: str, name: str) -> int | None:
    """A page cursor from the query string; ValueError saying what is wrong."""
    if not value:
        return None
    if not value.isdigit():
        raise ValueError(f"{name} must be a message number (digits), not {value!r}")
    return int(value)


def window(
    store: EventStore,
    participant_id: str,
    *,
    before: int | None = None,
    after: int | None = None,
    count: int = PAGE,
) -> Window:
    """The page ending before seq `before`, starting after seq `after`, or else the newest."""
    if after is not None:
        lines, more = read_page(store, participant_id, after, count)
        older = lines[0].seq if lines and _any_before(store, participant_id, lines[0].seq) else None
        if more is None:  # nothing newer than this page: it is the newest one
            return _newest(store, participant_id, count)
        return Window(lines, older, lines[-1].seq, live=False)
    seqs = last_seqs(store, participant_id, LINE_TYPES, count + 1, before)
    if not seqs:
        return Window([], None, None, live=before is None)
    first = seqs[:count][-1]
    lines, _ = read_page(store, participant_id, first - 1, count)
    if before is not None:
        lines = [line for line in lines if line.seq < before]
    older = first if len(seqs) > count else None
    if before is None:
        return Window(lines, older, None, live=True)
    newer = lines[-1].seq if lines else None
    return Window(lines, older, newer, live=False)


def _newest(store: EventStore, participant_id: str, count: int) -> Window:
    return window(store, participant_id, count=count)


def _any_before(store: EventStore, participant_id: str, seq: int) -> bool:
    return bool(last_seqs(store, participant_id, LINE_TYPES, 1, seq))
