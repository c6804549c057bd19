"""Staff accounts of the researcher console: added, password set, signed in and out, role
changed, disabled, second factor enabled, disabled or reset.

Each account is its own stream, `staff:<email>`. A password hash is never an event (events are
kept for ever); it lives in the operational `staff_credentials` table.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.store.events import EventData, event, fields

Role = Literal["admin", "researcher", "statistician", "supervisor", "reviewer"]
EMAIL = r"^[^@\s]{1,64}@[^@\s]{1,80}\.[^@\s]{1,20}$"


@event("staff.added")
class StaffAdded(EventData):
    """An account was created; `by` names who created it (`cli`, `staff:<email>`)."""

    personal = fields()
    plain = fields("by", "email")

    email: str = Field(pattern=EMAIL, max_length=90)
    role: Role
    by: str


@event("staff.password_set")
class StaffPasswordSet(EventData):
    """The staff member chose a password (the first time, or a new one)."""

    personal = fields()
    plain = fields("email")

    email: str


@event("staff.signed_in")
class StaffSignedIn(EventData):
    personal = fields()
    plain = fields("email")

    email: str


@event("staff.signed_out")
class StaffSignedOut(EventData):
    personal = fields()
    plain = fields("email")

    email: str


@event("staff.role_changed")
class StaffRoleChanged(EventData):
    """An admin gave the account another role; it applies from the account's next request."""

    personal = fields()
    plain = fields("by", "email")

    email: str
    role: Role
    previous: Role
    by: str


@event("staff.disabled")
class StaffDisabled(EventData):
    """The account can no longer sign in; its past actions stay attributed to it."""

    personal = fields()
    plain = fields("by", "email")

    email: str
    by: str


@event("staff.exported")
class StaffExported(EventData):
    """The staff member downloaded an export file from the console (until 2026-11: console
    downloads are now `export.written`, as `tandem export`'s are; kept to read old events)."""

    personal = fields()
    plain = fields("email", "since")

    email: str
    file: Literal[
        "participants", "messages", "results", "retrievals", "forms", "events", "codebook"
    ]
    format: Literal["csv", "jsonl", "md", "json"]
    since: str | None = None


@event("staff.two_factor_enabled")
class StaffTwoFactorEnabled(EventData):
    """The staff member confirmed a TOTP second factor: sign-in now asks for a code."""

    personal = fields()
    plain = fields("email")

    email: str


@event("staff.two_factor_disabled")
class StaffTwoFactorDisabled(EventData):
    """The staff member turned their TOTP second factor off (with their password and a code)."""

    personal = fields()
    plain = fields("email")

    email: str


@event("staff.two_factor_reset")
class StaffTwoFactorReset(EventData):
    """An admin cleared the account's TOTP second factor (its owner lost the authenticator);
    `by` names the admin (`cli`, `staff:<email>`). The owner signs in with the password alone
    and enrols again (admins at once under CONSOLE_REQUIRE_2FA)."""

    personal = fields()
    plain = fields("by", "email")

    email: str
    by: str
