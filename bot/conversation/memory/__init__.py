"""A participant's conversation memory (pure): what a turn decides on that the participants
row's other columns do not hold, folded event by event into the row's `memory` column.

A turn must cost the same at the 10th and at the 100,000th event (issue 15), so nothing it
decides on may come from folding the whole stream. What the turn's code used to fold from the
stream (`bot.timers.history`, `bot.store.delivery`, open questions, the intervention's counts,
the supervisors' last text, live schedules...) is kept here instead, in the same transaction
as the events, and rebuilt by replay like every other column (`tandem replay --check`
compares it). The conversation owns it; the store folds the column through the port
`bot.store.projections.columns`, with `COLUMN_FOLD` registered by the composition root. The
chat transcript a turn shows the LLM is a bounded query of the last messages
(`bot.store.recent`); pending timers are the `timers` table's rows.

The memory is a JSON document with named fields (`model.MemoryDoc`), versioned by its `v`
(`VERSION`). The positional document of version 0 (`{"format": 1, ...}`) is read through the
upcaster (`model.upcast`) and rewritten as this version at the row's next event; a document of
a version this code does not read is read as empty until `tandem replay --repair` rewrites it,
never guessed at. Everything in it is bounded: latest values, counts, live sets, and rings
(`RING`) of the messages and timers a later timer or answer refers to. A reference older than
its ring (a reminder whose message had 64 newer messages queued before it fired) is reported as
not found, which handlers already treat as "not in these events".

Layout: `model` (the document, its bounds, the upcaster), `fold` (one reducer an event type),
`reading` (`Memory`, the questions a turn asks of it).
"""

from __future__ import annotations

from bot.conversation.memory.fold import COLUMN_FOLD, REDUCERS, TYPES, apply, fold
from bot.conversation.memory.model import (
    QUESTIONS,
    RING,
    SMALL_RING,
    VERSION,
    MemoryDoc,
    empty,
    of,
    upcast,
)
from bot.conversation.memory.reading import Memory, remembered

__all__ = [
    "COLUMN_FOLD",
    "QUESTIONS",
    "REDUCERS",
    "RING",
    "SMALL_RING",
    "TYPES",
    "VERSION",
    "Memory",
    "MemoryDoc",
    "apply",
    "empty",
    "fold",
    "of",
    "remembered",
    "upcast",
]
