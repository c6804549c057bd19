"""Engines for SQLite (WAL, BEGIN IMMEDIATE under a writer lock file) and PostgreSQL (psycopg)."""

from __future__ import annotations

import itertools
import json
import logging
import os
import sqlite3
import threading
import time
import urllib.parse
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal

try:
    import fcntl
except ImportError:  # not on Windows: SQLite's own busy wait alone orders the writers there
    fcntl = None  # type: ignore[assignment]  # no fcntl on Windows: no writer lock there

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.pool import QueuePool

log = logging.getLogger(__name__)


def json_dumps(value: Any) -> str:
    """The JSON of a stored column (events' payloads, projections' JSON columns), by orjson:
    an append encodes three of them and a turn reads a hundred, and orjson takes a fraction of
    `json`'s time for a participant's conversation memory. What orjson refuses and `json`
    writes (a key that is not a string, an integer past 64 bits) is written by `json`."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value)


def json_loads(text: str | bytes) -> Any:
    """A stored JSON column's value; what orjson refuses (`NaN`, which `json` wrote into older
    SQLite rows) is read by `json`."""
    try:
        return orjson.loads(text)
    except ValueError:  # orjson.JSONDecodeError
        return json.loads(text)


READ_ONLY = "tandem_read_only"
# A PostgreSQL connection idle this long is pinged before use (`_ping_when_idle`).
PING_IDLE_SECONDS = 5.0
_CHECKED_IN = "tandem_checked_in"


def normalise_url(url: str) -> str:
    """Accept `postgres://` and `postgresql://` and use the psycopg 3 driver for both."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def backend_name(url: str) -> str:
    """The database engine a URL names (`sqlite`, `postgresql`, or another make_engine refuses)."""
    return make_url(normalise_url(url)).get_backend_name()


def make_engine(
    url: str,
    *,
    pool_size: int = 5,
    echo: bool = False,
    ping_idle_seconds: float = PING_IDLE_SECONDS,
    writer_priority: WriterPriority | None = None,
) -> Engine:
    """An engine configured for Tandem's write pattern on the URL's database; on PostgreSQL a
    pooled connection idle for `ping_idle_seconds` or more is pinged before use; on SQLite its
    writers take the writer lock with `writer_priority` (WriterPriority)."""
    url = normalise_url(url)
    backend = backend_name(url)
    if backend == "sqlite":
        return _sqlite_engine(url, echo, writer_priority)
    if backend == "postgresql":
        engine = create_engine(
            url,
            echo=echo,
            hide_parameters=True,  # a failed statement's values (phones, texts) stay out of logs
            json_serializer=json_dumps,
            json_deserializer=json_loads,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"connect_timeout": 10},
        )
        _ping_when_idle(engine, ping_idle_seconds)
        _utc_sessions(engine)
        return engine
    raise ValueError(f"unsupported database {backend!r}: use sqlite or postgresql")


def _ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    """`pool_pre_ping`, only for connections idle `idle_seconds` or more.

    SQLAlchemy's pre-ping sends `SELECT 1` at every checkout: on a webhook (one checkout, one
    transaction) a round trip in eight, and CPU in the web process and the server, at 500
    requests/s. A connection checked in moments ago is almost surely alive; one idle longer
    (a database restarted overnight, a firewall's idle timeout) is pinged, and a dead one is
    replaced before use, as with pre-ping. A server that dies within the idle window fails the
    next statement on each pooled connection once (the webhook answers 503, the pool is
    invalidated and reconnects)."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection: Any, record: Any) -> None:
        record.info[_CHECKED_IN] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get(_CHECKED_IN)
        if since is None or time.monotonic() - since < idle_seconds:
            return  # just connected, or back moments ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # noqa: BLE001 - any failure: take another connection
            raise DisconnectionError("a pooled connection failed its ping") from exc


def _utc_sessions(engine: Engine) -> None:
    """Every session in UTC (`SET TIME ZONE 'UTC'` once per new connection), whatever the
    server's own TimeZone (Debian's default is `Etc/UTC`, a host's is often local). Each
    timestamptz value then comes back with `datetime.UTC` itself as its zone (psycopg maps the
    name "UTC", and only that name, to it), which `UtcDateTime` passes through as it is instead
    of converting every value (a replay or export reads six per event); and SQL that casts or
    truncates a timestamp works in UTC on every server."""

    @event.listens_for(engine, "connect")
    def _in_utc(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute("SET TIME ZONE 'UTC'")
        dbapi_connection.commit()


# The writer lock each thread holds (by thread id): a thread that writes on a second connection
# inside its first write transaction leaves the lock file alone, so it waits on SQLite's busy
# timeout and fails as it always did, instead of waiting for itself for ever.
_holders: dict[int, WriterLockedConnection] = {}
_holders_lock = threading.Lock()


# Write commits of this process between two WAL checkpoints (SQLite's automatic checkpoint, at
# 1,000 pages, is off on these connections: it would run inside COMMIT, under the writer lock).
CHECKPOINT_EVERY = 200
_commits = itertools.count(1)


class Checkpointer:
    """Copies a SQLite database's WAL into the database file in a thread of its own when a
    commit asks, and has a later commit finish the copy.

    A checkpoint copies pages for milliseconds (longer after a bulk write). Run by the commit
    that asked, after it let the writer lock go, it still held up that commit's caller: in
    `tandem serve`'s web process, a webhook's ack, once every CHECKPOINT_EVERY commits. Here its
    bulk runs beside the callers (`checkpoint`: PASSIVE, on a connection opened for it, with the
    GIL released while SQLite copies).

    Copying is not all a checkpoint is for: the WAL starts again from its beginning only when
    a writer begins with every frame copied. Commits go on during the bulk copy, and it leaves
    the frames they wrote; were nothing else done, a steady writer would never find the WAL
    copied, and the WAL grew without end (26 MB in 5,000 commits, against 1.1 MB). So once the
    bulk is copied, the next commit of the database in this process runs one more PASSIVE
    checkpoint itself (`passive_checkpoint`): it copies only the frames written during the bulk
    copy (a fraction of a millisecond), and that thread's next writer finds the WAL copied and
    starts it again, as when the committing thread copied it all.
    """

    def __init__(self) -> None:
        self._reset()
        if hasattr(os, "register_at_fork"):  # a forked child has no thread: it starts its own
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._wanted: dict[str, None] = {}  # databases to checkpoint, in the order asked
        self._copied: set[str] = set()  # databases whose bulk is copied: a commit finishes
        self._running = False  # a checkpoint is under way
        self._thread: threading.Thread | None = None

    def request(self, database: str) -> None:
        """Checkpoint `database` soon (once, however many commits ask before it starts)."""
        with self._lock:
            self._wanted[database] = None
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="wal-checkpoint", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def to_finish(self, database: str) -> bool:
        """Whether the caller, having just committed to `database`, is to finish a copy the
        thread made (True once per copy)."""
        if database not in self._copied:  # every commit asks: no lock unless it is there
            return False
        with self._lock:
            if database not in self._copied:
                return False
            self._copied.discard(database)
            return True

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every checkpoint asked for has run; False if `timeout` s went first."""
        with self._lock:
            return self._changed.wait_for(lambda: not self._wanted and not self._running, timeout)

    @contextmanager
    def held(self) -> Iterator[None]:
        """No checkpoint runs while the block does: it waits for one under way to end, and the
        thread starts none until the block ends. For a fork() (bot.store.jobs): a child forked
        while the thread was inside SQLite inherits SQLite's own mutex held, and its first
        sqlite3.connect waits for it for ever (an export's workers hung so in a test run).
        Nothing inside the block may commit: a commit's `request` waits for it."""
        with self._lock:
            self._changed.wait_for(lambda: not self._running)
            yield

    def _run(self) -> None:
        while True:
            with self._lock:
                self._changed.wait_for(lambda: bool(self._wanted))
                database = next(iter(self._wanted))
                del self._wanted[database]
                self._running = True
            copied = False
            try:
                copied = checkpoint(database)
            finally:
                with self._lock:
                    if copied:
                        self._copied.add(database)
                    self._running = False
                    self._changed.notify_all()


def checkpoint(database: str) -> bool:
    """A PASSIVE checkpoint of `database`'s WAL on a connection of its own; whether it ran
    (`passive_checkpoint`)."""
    if not os.path.exists(database):  # removed since the commit that asked (a test's, say)
        return False
    try:
        conn = sqlite3.connect(
            f"file:{urllib.parse.quote(database)}?mode=rw", uri=True, isolation_level=None
        )
    except sqlite3.Error as exc:
        log.warning("WAL checkpoint failed: %s", type(exc).__name__)
        return False
    try:
        return passive_checkpoint(conn)
    finally:
        conn.close()


def passive_checkpoint(conn: sqlite3.Connection) -> bool:
    """`PRAGMA wal_checkpoint(PASSIVE)` on `conn`; whether it ran. A failure is logged (its
    type only) and left to the next one: what was committed stays in the WAL."""
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").close()
    except sqlite3.Error as exc:
        log.warning("WAL checkpoint failed: %s", type(exc).__name__)
        return False
    return True


CHECKPOINTS = Checkpointer()


# Which writers go first (`tandem serve`): a "first" writer (the web's process) holds the
# `-writer-gate` file while it waits for the writer lock, and a "yield" writer (the background
# child: turns, sends, timers) neither starts waiting while one does nor keeps a lock it took
# as one began to. The dispatcher's and the workers' transactions were what a webhook waited
# behind. Writers with no priority (separate gunicorn and `tandem worker` processes) take the
# writer lock alone, as before.
WriterPriority = Literal["first", "yield"]


def _close_all(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


class WriterLockedConnection(sqlite3.Connection):
    """A pysqlite connection that holds an exclusive `flock` on the database's `-writer` file
    from BEGIN IMMEDIATE to COMMIT or ROLLBACK.

    SQLite has one writer at a time, and a writer that finds the database locked sleeps in its
    busy handler (1, 2, 5, 10 ... 100 ms) and looks again: the lock may have been free for
    most of that sleep, and another writer may take it first, again and again. Under load (the
    web threads of `tandem serve` and its background process) webhooks waited up to seconds
    for BEGIN IMMEDIATE while the database was mostly idle. Waiting on a `flock` instead, a
    writer wakes the moment the previous one commits. Every Tandem process on the file takes
    the same lock; another program (the sqlite3 shell) still meets SQLite's busy wait.
    """

    database: str | None = None  # its file's path, when it takes the writer lock
    lock_fd: int | None = None
    gate_fd: int | None = None
    priority: WriterPriority | None = None
    _owner: int | None = None

    def open_writer_lock(
        self, database: str, path: str, priority: WriterPriority | None = None
    ) -> None:
        self.database = database
        self.lock_fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self.gate_fd = os.open(f"{path}-gate", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self.priority = priority
        # Closed with the connection, or when a connection nobody closed is collected.
        self._close_lock = weakref.finalize(self, _close_all, self.lock_fd, self.gate_fd)

    def take_writer_lock(self) -> None:
        if self.lock_fd is None or fcntl is None:
            return
        me = threading.get_ident()
        with _holders_lock:
            if me in _holders:  # this thread writes on another connection already
                return
        if self.priority == "first":
            self._take_first()
        elif self.priority == "yield":
            self._take_yielding()
        else:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)  # waits with the GIL released
        with _holders_lock:
            _holders[me] = self
        self._owner = me

    def _take_first(self) -> None:
        """Wait for the writer lock holding the gate: no yielding writer starts waiting."""
        assert self.lock_fd is not None and self.gate_fd is not None
        fcntl.flock(self.gate_fd, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
        finally:
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)

    def _take_yielding(self) -> None:
        """Pass the gate (wait while a first writer waits), take the writer lock, and hand it
        back and start again if a first writer began waiting meanwhile."""
        assert self.lock_fd is not None and self.gate_fd is not None
        while True:
            fcntl.flock(self.gate_fd, fcntl.LOCK_SH)
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX)
            try:
                fcntl.flock(self.gate_fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:  # a first writer waits for what we hold: it goes first
                fcntl.flock(self.lock_fd, fcntl.LOCK_UN)
                continue
            fcntl.flock(self.gate_fd, fcntl.LOCK_UN)
            return

    def release_writer_lock(self) -> None:
        owner, self._owner = self._owner, None
        if owner is None or self.lock_fd is None:
            return
        with _holders_lock:
            if _holders.get(owner) is self:
                del _holders[owner]
        fcntl.flock(self.lock_fd, fcntl.LOCK_UN)

    def commit(self) -> None:
        wrote = self._owner is not None
        try:
            super().commit()
        finally:
            self.release_writer_lock()
        if not wrote or not self.database:
            return
        if next(_commits) % CHECKPOINT_EVERY == 0:
            # Not here, nor inside COMMIT (SQLite's automatic checkpoint): beside the callers.
            CHECKPOINTS.request(self.database)
        elif CHECKPOINTS.to_finish(self.database):
            # What was committed while the thread copied the rest (Checkpointer).
            passive_checkpoint(self)

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.release_writer_lock()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.release_writer_lock()
            if self.lock_fd is not None:
                self._close_lock()


def _begin(conn: Any, dbapi_connection: sqlite3.Connection, sql: str) -> None:
    """Say `sql` (BEGIN or BEGIN IMMEDIATE) on the driver's connection: every transaction
    does, and SQLAlchemy's execution of it (`exec_driver_sql`) cost many times the driver's
    own. A failure is SQLAlchemy's exception, as from `exec_driver_sql`
    (`OperationalError` for "database is locked")."""
    try:
        dbapi_connection.execute(sql).close()
    except sqlite3.Error as exc:
        raise DBAPIError.instance(
            sql, (), exc, sqlite3.Error, hide_parameters=True, dialect=conn.dialect
        ) from exc


def writer_lock_path(url: str) -> str | None:
    """The file whose `flock` orders the writers of a SQLite database: `<database>-writer`,
    beside its `-wal` and `-shm` (never the database file itself: closing any descriptor of
    it would drop SQLite's own POSIX locks). None for an in-memory or URI database."""
    parsed = make_url(url)
    database = parsed.database
    if not database or database == ":memory:" or parsed.query.get("uri"):
        return None
    return f"{database}-writer"


def _sqlite_engine(url: str, echo: bool, writer_priority: WriterPriority | None) -> Engine:
    # A pool of connections, each used by one thread at a time: opening a SQLite connection
    # (and setting WAL on it) costs more than the append it serves.
    engine = create_engine(
        url,
        echo=echo,
        hide_parameters=True,  # a failed statement's values (phones, texts) stay out of logs
        json_serializer=json_dumps,
        json_deserializer=json_loads,
        poolclass=QueuePool,
        pool_size=8,
        max_overflow=16,
        connect_args={
            "timeout": 30,
            "check_same_thread": False,
            "factory": WriterLockedConnection,
        },
    )
    lock_path = writer_lock_path(url)
    database = os.path.abspath(make_url(url).database or "") if lock_path is not None else ""
    # A new database file is the owner's only (0600); SQLite gives its -wal and -shm the same.
    with suppress(FileExistsError, FileNotFoundError):
        if database:
            os.close(os.open(database, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from pysqlite so that we can say BEGIN IMMEDIATE ourselves.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        if lock_path is not None and fcntl is not None:  # the Checkpointer's thread does it
            cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.execute("PRAGMA foreign_keys=ON")
        # A REPLACE that removes a row fires its DELETE trigger, which refuses it on `events`.
        cursor.execute("PRAGMA recursive_triggers=ON")
        cursor.close()
        if lock_path is not None:
            dbapi_connection.open_writer_lock(database, lock_path, writer_priority)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # A deferred transaction that reads and then writes cannot wait for the write lock;
        # every transaction writes unless it says it only reads.
        dbapi_connection = conn.connection.dbapi_connection
        if conn.get_execution_options().get(READ_ONLY):
            _begin(conn, dbapi_connection, "BEGIN")
            return
        dbapi_connection.take_writer_lock()
        try:
            _begin(conn, dbapi_connection, "BEGIN IMMEDIATE")
        except BaseException:
            dbapi_connection.release_writer_lock()
            raise

    return engine
