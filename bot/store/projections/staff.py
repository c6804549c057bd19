"""The `staff` projection: each console account, its role and whether it may sign in."""

from __future__ import annotations

from bot.store.event_types.staff import (
    StaffAdded,
    StaffDisabled,
    StaffExported,
    StaffPasswordSet,
    StaffRoleChanged,
    StaffSignedIn,
    StaffSignedOut,
)
from bot.store.events import Event
from bot.store.projections import Projection, Row

COLUMNS = (
    "email",
    "role",
    "status",
    "added_by",
    "added_at",
    "password_set_at",
    "last_signed_in_at",
    "updated_at",
)
TYPES = {
    cls.event_type
    for cls in (
        StaffAdded,
        StaffPasswordSet,
        StaffSignedIn,
        StaffSignedOut,
        StaffDisabled,
        StaffExported,
        StaffRoleChanged,
    )
}
STREAM_PREFIX = "staff:"


def staff_stream(email: str) -> str:
    return f"{STREAM_PREFIX}{email}"


def key(event: Event) -> str | None:
    return event.data.email if event.event_type in TYPES else None  # type: ignore[attr-defined]  # every type in TYPES has it


def apply(row: Row | None, event: Event) -> Row | None:
    data, at = event.data, event.recorded_at
    if isinstance(data, StaffAdded):
        if row is not None:
            return row
        return {
            "email": data.email,
            "role": data.role,
            "status": "active",
            "added_by": data.by,
            "added_at": at,
            "password_set_at": None,
            "last_signed_in_at": None,
            "updated_at": at,
        }
    if row is None:
        return None
    if isinstance(data, StaffPasswordSet):
        return {**row, "password_set_at": at, "updated_at": at}
    if isinstance(data, StaffSignedIn):
        return {**row, "last_signed_in_at": at, "updated_at": at}
    if isinstance(data, StaffRoleChanged):
        return {**row, "role": data.role, "updated_at": at}
    if isinstance(data, StaffDisabled):
        return {**row, "status": "disabled", "updated_at": at}
    return row


PROJECTION = Projection("staff", "email", COLUMNS, key, apply, types=frozenset(TYPES))
