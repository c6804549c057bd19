"""The catalogue of event payloads, one module per area; importing it registers them all
(`bot.store.event_store` does, so every stored type can be decoded)."""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

from bot.store.event_types.messages import (  # noqa: E402
    MessageDeferred,
    MessageFailed,
    MessageQueued,
    MessageReceived,
    MessageSent,
    MessageStatus,
    MessageSuppressed,
)
from bot.store.event_types.participants import (  # noqa: E402
    ParticipantEnrolled,
    ParticipantOptedIn,
    ParticipantOptedOut,
    ParticipantStatusChanged,
    ParticipantUnenrolled,
    ParticipantUpdated,
)

__all__ = [
    "MessageDeferred",
    "MessageFailed",
    "MessageQueued",
    "MessageReceived",
    "MessageSent",
    "MessageStatus",
    "MessageSuppressed",
    "ParticipantEnrolled",
    "ParticipantOptedIn",
    "ParticipantOptedOut",
    "ParticipantStatusChanged",
    "ParticipantUnenrolled",
    "ParticipantUpdated",
]
