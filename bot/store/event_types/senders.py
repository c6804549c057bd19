"""Unknown senders: the erasure of what a number that matches no participant sent."""

from __future__ import annotations

from typing import Literal

from bot.store.event_types.participants import Requester
from bot.store.events import EventData, event, fields


@event("sender.erased")
class SenderErased(EventData):
    """An unknown sender's data key was destroyed (on their `sender:<id>` stream): every
    personal field of their messages reads `[erased]` from now on, and their number's hash is
    gone. `retention` says UNKNOWN_SENDER_RETENTION_DAYS ran out (the leader's periodic job or
    `tandem maintenance`); `request` that someone asked (`tandem erase --phone`, the console).
    Who asked and why stay readable (so say nothing personal in `reason`)."""

    personal = fields()
    plain = fields("reason")

    reason: str
    cause: Literal["request", "retention"]
    requested_by: Requester | Literal["retention"]
    # How many of the sender's events had sealed personal fields when the key went.
    sealed_events: int = 0
