"""PostgreSQL's own log holds no phone number or message text after version conflicts.

PostgreSQL logs the statement that raised an error (`log_min_error_statement`, default
`error`), and a routine version conflict is a unique violation. The one-message commits used to
write their values into that statement's text; now every statement is bound by the server, so
the logged text holds `$n` placeholders only. The test reads the server's log file as the
superuser (`pg_read_file`), from where it stood when the test began, keeps the lines of its own
throwaway database (the log line prefix names it), and looks for the participants' phones and
texts; a literal it puts into a failing statement on purpose shows that the scan finds what is
there."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, make_url, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from bot.core.clock import FakeClock
from bot.store.database import make_engine
from bot.store.event_store import ConcurrencyError, EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import new_id, participant_of, participant_stream
from bot.store.flight import commit_in_one_flight
from bot.store.sealing import Sealer
from tests.conftest import ADMIN_URL, TEST_MASTER_KEY, fresh_database
from tests.factories import enrolled, received

PARTICIPANTS = [
    ("+14155550111", "my HIV status is private 0111", "Your dose reminder 0111"),
    ("+14155550122", "I relapsed last night 0122", "Call your sponsor 0122"),
    ("+14155550133", "feeling hopeless today 0133", "We are here for you 0133"),
]
CONTROL = "+14155550199 deliberately logged"
PREFIX = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[.\d]* \w+ \[\d+\] (?:(\S*)@(\S*) )?")


def _log_file(admin: Engine) -> str:
    """The server's current log file: the logging collector's, or (collector off, stderr) the
    file pg_ctlcluster sends stderr to, as on Debian and in CI."""
    with admin.connect() as conn:
        current = conn.execute(text("SELECT pg_current_logfile()")).scalar()
        if current:
            return str(current)
        cluster = conn.execute(text("SHOW cluster_name")).scalar() or ""
    path = f"/var/log/postgresql/postgresql-{cluster.replace('/', '-')}.log"
    if not cluster or not Path(path).exists():
        pytest.fail(f"PostgreSQL's log file was not found (no collector, no {path})")
    return path


def _size(admin: Engine, path: str) -> int:
    with admin.connect() as conn:
        return int(conn.execute(text("SELECT (pg_stat_file(:p)).size"), {"p": path}).scalar_one())


def _entries(admin: Engine, path: str, since: int, database: str) -> list[str]:
    """The log's entries after byte `since` written by sessions of `database` (a line with the
    prefix starts an entry; lines without it continue the entry before them)."""
    with admin.connect() as conn:
        read = text("SELECT pg_read_file(:p, :o, :n)")
        size = _size(admin, path)
        chunk = conn.execute(read, {"p": path, "o": since, "n": size - since}).scalar_one()
    entries: list[tuple[str | None, str]] = []
    for line in chunk.splitlines():
        found = PREFIX.match(line)
        if found:
            entries.append((found.group(2), line))
        elif entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + "\n" + line)
    return [entry for db, entry in entries if db == database]


def _conflict_in_one_flight(store: EventStore, phone: str, said: str, answer: str) -> None:
    first = enrolled(phone=phone)
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    head = store.projection_row("participants", str(participant_of(stream)))
    assert head is not None
    reply = MessageQueued(outbox_id=new_id(), to_address=phone, channel="sms", body=answer)
    with pytest.raises(IntegrityError), store.transaction() as tx:
        staged = tx.stage(stream, [received("SMa" + phone, said, phone), reply], 1, dict(head))
        store.append(stream, [received("SMb" + phone, said, phone)])  # committed first
        commit_in_one_flight(tx, [staged])
    # and the statement-by-statement append, at a version the stream has left
    with pytest.raises(ConcurrencyError):
        store.append(stream, [received("SMc" + phone, said, phone), reply], expected_version=1)


def test_version_conflicts_leave_no_phone_or_text_in_the_server_log(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = fresh_database("postgresql", request, tmp_path)
    database = make_url(url).database or ""
    admin = make_engine(ADMIN_URL)
    try:
        with admin.connect() as conn:  # as a production server without the advised settings
            conn.execute(text(f'ALTER DATABASE "{database}" SET log_min_error_statement = error'))
            conn.commit()
        path = _log_file(admin)
        since = _size(admin, path)
        store = EventStore(make_engine(url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
        try:
            for phone, said, answer in PARTICIPANTS:
                _conflict_in_one_flight(store, phone, said, answer)
            with store.engine.connect() as conn, pytest.raises(DBAPIError):
                conn.exec_driver_sql(f"SELECT '{CONTROL}'::text, 1 / 0")  # logged on purpose
        finally:
            store.engine.dispose()
        deadline = time.monotonic() + 10
        logged = _entries(admin, path, since, database)
        while not any(CONTROL in entry for entry in logged):  # the scan finds a literal
            assert time.monotonic() < deadline, logged
            time.sleep(0.2)
            logged = _entries(admin, path, since, database)
    finally:
        admin.dispose()
    statements = [e for e in logged if "STATEMENT:" in e]
    conflicts = [e for e in statements if "INSERT INTO events" in e]
    assert len(conflicts) >= len(PARTICIPANTS), logged  # the conflicts were logged, with SQL
    found = [
        (secret, entry)
        for entry in logged
        for person in PARTICIPANTS
        for secret in person
        if secret in entry
    ]
    assert found == []
