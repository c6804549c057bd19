"""The catalogue of event payloads, one module per area; importing it registers them all."""

from __future__ import annotations

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")

from bot.event_types.messages import (  # noqa: E402
    MessageDeferred,
    MessageFailed,
    MessageQueued,
    MessageReceived,
    MessageSent,
    MessageStatus,
    MessageSuppressed,
)
from bot.event_types.participants import (  # noqa: E402
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
