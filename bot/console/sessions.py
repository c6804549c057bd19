"""Console sessions: how long one lives, what counts as activity, and the cookie's link to its
server-side record (`bot.store.console_sessions`).

The signed cookie alone cannot be ended: a copy of it stays valid until it expires. So the
cookie carries only a random token, and a session is alive while its record is: deleted at
sign-out, password change, role change and disable, and refused past its absolute lifetime or
after a stretch with no activity. Requests a page makes by itself (the transcript polls every
5 s) are not activity, so an open tab left alone still times out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from flask import session

from bot.store import console_sessions
from bot.store.console_sessions import SessionRecord
from bot.store.event_store import EventStore

ABSOLUTE = timedelta(hours=12)
IDLE = timedelta(minutes=30)
# Endpoints a page calls on its own: they neither need nor extend a session's activity.
PASSIVE_ENDPOINTS = frozenset({"console.transcript", "console.static"})


def expired(record: SessionRecord, now: datetime) -> bool:
    """Past its absolute lifetime, or idle for longer than IDLE."""
    return now >= record.created_at + ABSOLUTE or now >= record.last_active_at + IDLE


def begin(store: EventStore, email: str, now: datetime, *, via_code: bool) -> bool:
    """Open a session for `email` and put its token in a fresh cookie session (a new CSRF
    token too). With a first-sign-in code, the code is used up; False if it already was."""
    console_sessions.end_started_before(store, now - ABSOLUTE)
    if via_code:
        token = console_sessions.open_session_with_code(store, email, now)
        if token is None:
            return False
    else:
        token = console_sessions.open_session(store, email, now)
    finish(store)  # a session this browser had before ends with its cookie
    session.permanent = True
    session["email"] = email
    session["sid"] = token
    return True


def current(store: EventStore, email: str, now: datetime, *, passive: bool) -> SessionRecord | None:
    """The live record of the cookie's session for `email`, or None (ended, expired, someone
    else's). A request that is not `passive` counts as activity."""
    token = session.get("sid")
    if not isinstance(token, str) or not token:
        return None
    record = console_sessions.find(store, token)
    if record is None or record.email != email:
        return None
    if expired(record, now):
        console_sessions.end(store, token)
        return None
    if not passive:
        console_sessions.touch(store, token, now)
    return record


def finish(store: EventStore) -> None:
    """End the cookie's session on the server and forget the cookie."""
    token = session.get("sid")
    if isinstance(token, str) and token:
        console_sessions.end(store, token)
    session.clear()


def end_all(store: EventStore, email: str) -> int:
    """End every session of `email` (password change, role change, disable)."""
    return console_sessions.end_all(store, email)
