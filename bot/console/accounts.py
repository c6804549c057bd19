"""Staff accounts: add one with a first-login code, sign in, set a password, change a role,
disable, reset a lost second factor, list.

Facts are events on the account's stream (`staff.added`, `staff.password_set`, …); the argon2
hash of the password or of the one-time code lives in `staff_credentials`, never in an event.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from bot.store import staff_totp
from bot.store.event_store import EventStore, Transaction
from bot.store.event_types.staff import (
    EMAIL,
    Role,
    StaffAdded,
    StaffDisabled,
    StaffPasswordSet,
    StaffRoleChanged,
    StaffTwoFactorReset,
)
from bot.store.events import NewEvent
from bot.store.projections.staff import staff_stream
from bot.store.staff_accounts import (
    account_and_credential,
    all_staff,
    forget_secret,
    locked_account,
    replace_secret,
)

ROLES: tuple[Role, ...] = ("admin", "researcher", "statistician", "supervisor", "reviewer")
MIN_PASSWORD = 12
ONE_TIME_VALID = timedelta(days=7)
HASHER = PasswordHasher()
# Verified against when the email is unknown, so that a wrong email costs as long as a wrong
# password and the timing does not tell which accounts exist.
_DUMMY = HASHER.hash(secrets.token_hex(16))


class AccountError(Exception):
    """A refused account change, naming the form field it is about."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class NoAccount(AccountError):
    """The email names no account."""

    def __init__(self, email: str) -> None:
        super().__init__("email", f"{email} has no account")


@dataclass(frozen=True)
class SignIn:
    """A successful sign-in: who, their role, and whether they must choose a password first."""

    email: str
    role: str
    must_set_password: bool


def log_name(email: str) -> str:
    """How the log names an account: a short hash of its normalised e-mail (the address itself
    is personal data; the hash still tells one account's sign-ins from another's)."""
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:12]


def normalise(email: str) -> str:
    email = email.strip().lower()
    if not re.fullmatch(EMAIL, email) or len(email) > 90:
        raise AccountError("email", "not an email address")
    return email


def add(store: EventStore, email: str, role: str, by: str, now: datetime) -> str:
    """Create the account; returns the one-time code for its first sign-in (valid 7 days)."""
    email = normalise(email)
    if role not in ROLES:
        raise AccountError("role", f"role must be one of {', '.join(ROLES)}")
    code = secrets.token_urlsafe(12)
    with store.transaction() as tx:
        if tx.version(staff_stream(email)) != 0:
            raise AccountError("email", f"{email} already has an account")
        added = StaffAdded(email=email, role=role, by=by)
        tx.append(staff_stream(email), [NewEvent(added, meta={"actor": by})], 0)
        _store_secret(tx, email, code, one_time=True, expires_at=now + ONE_TIME_VALID, now=now)
    return code


def sign_in(store: EventStore, email: str, secret: str, now: datetime) -> SignIn | None:
    """The account if `secret` is its password (or unexpired first-login code), else None."""
    try:
        email = normalise(email)
    except AccountError:
        email = ""
    account, cred = account_and_credential(store, email)
    stored = cred["secret_hash"] if cred is not None else _DUMMY
    try:
        HASHER.verify(stored, secret)
    except (VerificationError, InvalidHashError):
        return None
    if account is None or cred is None or account["status"] != "active":
        return None
    if cred["one_time"] and cred["expires_at"] is not None and cred["expires_at"] <= now:
        return None
    return SignIn(email=email, role=account["role"], must_set_password=cred["one_time"])


def set_password(
    store: EventStore, email: str, password: str, repeated: str, now: datetime
) -> None:
    """Replace the account's secret with a new password and record `staff.password_set`."""
    if len(password) < MIN_PASSWORD:
        raise AccountError("password", f"use at least {MIN_PASSWORD} characters")
    if password != repeated:
        raise AccountError("repeated", "the two passwords differ")
    with store.transaction() as tx:
        event = NewEvent(StaffPasswordSet(email=email), meta={"actor": f"staff:{email}"})
        tx.append(staff_stream(email), [event])
        _store_secret(tx, email, password, one_time=False, expires_at=None, now=now)


def change_role(store: EventStore, email: str, role: str, by: str) -> bool:
    """Give the account `role` (`staff.role_changed`); False if it already had it. Staff
    cannot change their own role, so an admin never demotes the last admin by mistake."""
    email = normalise(email)
    if role not in ROLES:
        raise AccountError("role", f"role must be one of {', '.join(ROLES)}")
    if by == f"staff:{email}":
        raise AccountError("role", "you cannot change your own role; ask another admin")
    with store.transaction() as tx:
        tx.lock(staff_stream(email))
        row = locked_account(tx, email)
        if row is None:
            raise NoAccount(email)
        if row["status"] != "active":
            raise AccountError("role", f"{email} is disabled")
        if row["role"] == role:
            return False
        changed = StaffRoleChanged(email=email, role=role, previous=row["role"], by=by)
        tx.append(staff_stream(email), [NewEvent(changed, meta={"actor": by})])
    return True


def disable(store: EventStore, email: str, by: str) -> None:
    """Stop the account signing in (`staff.disabled`); its sessions end at their next
    request. Staff cannot disable their own account."""
    email = normalise(email)
    if by == f"staff:{email}":
        raise AccountError("email", "you cannot disable your own account; ask another admin")
    with store.transaction() as tx:
        tx.lock(staff_stream(email))
        row = locked_account(tx, email)
        if row is None:
            raise NoAccount(email)
        if row["status"] == "disabled":
            return
        event = NewEvent(StaffDisabled(email=email, by=by), meta={"actor": by})
        tx.append(staff_stream(email), [event])
        forget_secret(tx, email)


def reset_two_factor(store: EventStore, email: str, by: str) -> bool:
    """Clear the account's TOTP second factor (`staff.two_factor_reset`, naming `by`) for a
    staff member who lost their authenticator: they sign in with the password alone and enrol
    again. False if it had none (nothing recorded). Staff turn their own off with a code on
    the Second factor page instead."""
    email = normalise(email)
    if by == f"staff:{email}":
        raise AccountError(
            "email", "you cannot reset your own second factor; turn it off, or ask another admin"
        )
    with store.transaction() as tx:
        tx.lock(staff_stream(email))
        if locked_account(tx, email) is None:
            raise NoAccount(email)
        if not staff_totp.remove_in(tx, email):
            return False
        event = NewEvent(StaffTwoFactorReset(email=email, by=by), meta={"actor": by})
        tx.append(staff_stream(email), [event])
    return True


def account(store: EventStore, email: str) -> dict[str, Any] | None:
    return store.projection_row("staff", email)


def all_accounts(store: EventStore) -> list[dict[str, Any]]:
    return all_staff(store)


def with_second_factor(store: EventStore) -> set[str]:
    """The accounts whose sign-in asks for a TOTP code."""
    return staff_totp.enabled_emails(store)


def _store_secret(
    tx: Transaction,
    email: str,
    secret: str,
    *,
    one_time: bool,
    expires_at: datetime | None,
    now: datetime,
) -> None:
    replace_secret(
        tx, email, HASHER.hash(secret), one_time=one_time, expires_at=expires_at, now=now
    )
