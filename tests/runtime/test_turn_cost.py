"""A turn costs the same at the 10,000th event as at the 10th (issue 15), proven by structure
rather than by timing: the real worker and handler (habit-coach, the real openai SDK against
the scripted FakeOpenAI) issue the same SQL statements, and fetch the same number of rows, for
a participant with 10 prior events as for one with 10,000: an inbound turn (intake answers
through the LLM) and a timer turn (a habit prompt's reminder, decided from the memory).

Rows are counted where the driver hands them over: every connection of the engine gets a
cursor class that counts what fetchone/fetchmany/fetchall return (sqlite3's `factory`,
psycopg's `cursor_factory`, set through SQLAlchemy's `do_connect` event); statements with the
`before_cursor_execute` event. A full load of the 10,000-event stream is counted too, so the
counter is seen to catch a fold of the stream.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from sqlalchemy import Engine, event

from bot.conversation import timer_turns
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.store.database import WriterLockedConnection, make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.messages import MessageQueued, MessageSent
from bot.store.event_types.work import WorkCompleted
from bot.store.events import EventData, NewEvent, new_id, participant_stream
from bot.store.services import Services
from bot.timers import one_shot
from bot.timers.firing import FiringPolicy, fire_due
from tests.factories import enrolled, received
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply

REPLY = "That sounds like a good start. What time of day suits you?"
FETCHED = [0]  # rows handed over by the driver, across every connection of the test's engine


def _counted(fetch: Callable[..., Any]) -> Callable[..., Any]:
    def counting(self: Any, *args: Any) -> Any:
        got = fetch(self, *args)
        if isinstance(got, list):
            FETCHED[0] += len(got)
        elif got is not None:
            FETCHED[0] += 1
        return got

    return counting


class CountingSqliteCursor(sqlite3.Cursor):
    fetchone = _counted(sqlite3.Cursor.fetchone)
    fetchmany = _counted(sqlite3.Cursor.fetchmany)
    fetchall = _counted(sqlite3.Cursor.fetchall)


class CountingSqliteConnection(WriterLockedConnection):  # the engine's own, plus counting
    def cursor(self, factory: Any = CountingSqliteCursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)


class CountingPsycopgCursor(psycopg.Cursor):  # type: ignore[type-arg]
    fetchone = _counted(psycopg.Cursor.fetchone)
    fetchmany = _counted(psycopg.Cursor.fetchmany)
    fetchall = _counted(psycopg.Cursor.fetchall)


@dataclass
class Cost:
    statements: list[str] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)  # rows fetched before each statement
    rows: int = 0
    begins: list[int] = field(default_factory=list)  # statements issued before each BEGIN
    # Statements run in the driver's autocommit (PostgreSQL: no BEGIN, COMMIT or ROLLBACK
    # round trips around them).
    autocommitted: list[str] = field(default_factory=list)
    checkouts: int = 0  # connections taken from the pool

    def transactions(self) -> list[list[str]]:
        """The statements grouped by transaction (SQLite's BEGIN statements left out)."""
        bounds = [*self.begins, len(self.statements)]
        return [
            [s for s in self.statements[a:b] if not s.startswith("BEGIN")]
            for a, b in zip(bounds, bounds[1:], strict=False)
        ]

    def worker_statements(self) -> list[str]:
        """The statements of every transaction but the append of the turn's decision (the
        event store's own cost, counted by its tests): the worker's bookkeeping and reads."""
        return [
            s
            for group in self.transactions()
            if not any(s.startswith("INSERT INTO events") for s in group)
            for s in group
        ]

    def per_statement(self) -> list[tuple[int, str]]:
        """(rows fetched after it, before the next one; the statement)."""
        ends = [*self.marks[1:], self.marks[0] + self.rows] if self.marks else []
        return [(e - m, s[:90]) for m, e, s in zip(self.marks, ends, self.statements, strict=True)]


def counting_engine(url: str) -> Engine:
    engine = make_engine(url)

    @event.listens_for(engine, "do_connect")
    def _factories(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
        if engine.dialect.name == "sqlite":
            cparams["factory"] = CountingSqliteConnection
        else:
            cparams["cursor_factory"] = CountingPsycopgCursor

    return engine


@contextmanager
def cost(engine: Engine) -> Iterator[Cost]:
    found = Cost()

    def record(conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        found.statements.append(" ".join(statement.split()))
        found.marks.append(FETCHED[0] - start)
        if getattr(conn.connection.dbapi_connection, "autocommit", False) is True:
            found.autocommitted.append(found.statements[-1])

    def begin(_conn: Any) -> None:
        found.begins.append(len(found.statements))

    def checkout(*_args: Any) -> None:
        found.checkouts += 1

    event.listen(engine, "before_cursor_execute", record)
    event.listen(engine, "begin", begin, insert=True)  # before SQLite's BEGIN (IMMEDIATE)
    event.listen(engine, "checkout", checkout)
    start = FETCHED[0]
    try:
        yield found
    finally:
        event.remove(engine, "before_cursor_execute", record)
        event.remove(engine, "begin", begin)
        event.remove(engine, "checkout", checkout)
        found.rows = FETCHED[0] - start


def _prior_turn(phone: str, k: int) -> list[EventData | NewEvent]:
    """One past turn as the engine records it."""
    message, outbox_id = new_id(), new_id()
    return [
        NewEvent(
            received(f"SMp{k}{message[:8]}", body=f"Message {k}", phone=phone), event_id=message
        ),
        LLMCalled(call_id=new_id(), purpose="intake", model="fake-model", messages=[]),
        MessageQueued(outbox_id=outbox_id, to_address=phone, channel="sms", body=REPLY),
        WorkCompleted(work_id=message),
        MessageSent(outbox_id=outbox_id, provider_sid=f"SM{new_id().replace('-', '')}"),
    ]


def _seed(store: EventStore, phone: str, prior: int) -> str:
    """A participant in habit-coach's intake with `prior` events behind them, appended in
    batches through the store (one INSERT a batch)."""
    person = enrolled(phone=phone, intervention="habit-coach", source="auto")
    stream = participant_stream(person.participant_id)
    first = new_id()
    batch: list[EventData | NewEvent] = [
        NewEvent(person, event_id=first),
        WorkCompleted(work_id=first),  # auto-enrolled: their first message is answered instead
    ]
    k = 0
    while 2 + 5 * k < prior:
        batch += _prior_turn(phone, k)
        k += 1
        if len(batch) >= 1000:
            store.append(stream, batch)
            batch = []
    if batch:
        store.append(stream, batch)
    return person.participant_id


def _turn(services: Services, worker: Worker, pid: str, phone: str, n: int) -> Cost:
    stream = participant_stream(pid)
    message = received(f"SMturn{n:06d}{pid[:8]}", body="How do I start tomorrow?", phone=phone)
    services.store.append(stream, [message], idempotency_key=message.message_sid)
    with cost(services.store.engine) as found:
        assert worker.run_once() == 1
    replies = [e for e in services.store.load(stream)[-4:] if e.event_type == "message.queued"]
    assert replies and replies[-1].data.body == REPLY
    return found


def _timer_turn(services: Services, worker: Worker, pid: str, phone: str) -> Cost:
    """A habit prompt's reminder firing: the handler decides from the memory whether the
    prompt was superseded or answered since (it was not: the reminder is sent)."""
    stream = participant_stream(pid)
    clock: FakeClock = services.clock  # type: ignore[assignment]
    person = {"participant_id": pid, "phone": phone, "channel": "sms", "timezone": "UTC"}
    prompt = MessageQueued(
        outbox_id=new_id(), to_address=phone, channel="sms", kind="prompt", body="Walk?"
    )
    remind = one_shot.reminder(person, prompt.outbox_id, timedelta(minutes=5), "Walk?", clock.now())
    services.store.append(stream, [prompt, remind])
    clock.advance(timedelta(minutes=6))
    assert len(fire_due(services.store, clock.now(), FiringPolicy())) == 1
    with cost(services.store.engine) as found:
        assert worker.run_once() == 1
    last = [e.data for e in services.store.load(stream)[-3:]]
    assert any(isinstance(d, MessageQueued) and d.kind == "reminder" for d in last), last
    return found


def _reads_the_next_head_and_releases(turn: Cost) -> None:
    """The append's transaction ends reading the next head item and releasing the lease: two
    statements on SQLite, one on PostgreSQL (a data-modifying CTE)."""
    last = turn.transactions()[-1]
    if turn.autocommitted:  # PostgreSQL
        assert last[-1].startswith("WITH head AS (SELECT work_items."), last[-1]
        assert "DELETE FROM leases" in last[-1]
        assert not last[-2].startswith("SELECT work_items.")
    else:
        assert last[-2].startswith("SELECT work_items.")
        assert last[-1].startswith("DELETE FROM leases")


def _reads_no_row_it_knows(turn: Cost) -> None:
    """The append of the decision reads neither the work item's row (the worker read it as the
    participant's head) nor the outbox row of the reply it queues (its id was drawn for this
    turn): the only rows it reads besides the participant's it locks are the next head item's."""
    last = turn.transactions()[-1]
    assert not any(s.startswith("SELECT outbox.") for s in last), last
    heads = 0 if turn.autocommitted else 1  # PostgreSQL reads it in the releasing CTE
    assert sum(s.startswith("SELECT work_items.") for s in last) == heads, last


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.script(*[ScriptedReply.text(REPLY)] * 10)
        yield server


def test_a_turn_at_10000_prior_events_costs_what_it_costs_at_10(
    database_url: str, clock: FakeClock, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    store = EventStore(counting_engine(database_url), clock=clock)
    env = {
        "DATABASE_URL": database_url,
        "OPENAI_BASE_URL": fake.url + "/v1",
        "OPENAI_API_KEY": "test-key",
        "TANDEM_MODEL": "fake-model",
        "LLM_MAX_RETRIES": "0",
        "INTERVENTION": "habit-coach",
        # The LLM is shown the last 2 messages: a window the 10-event stream fills too.
        "CHAT_HISTORY_LIMIT": "2",
    }
    services = build_services(load_settings(env, env_file=None), clock=clock, store=store)
    worker = Worker(services, build_handler(services), "cost-test")
    small, large = "+14165550010", "+14165550011"
    people = {10: _seed(store, small, 10), 10_000: _seed(store, large, 10_000)}
    phones = {10: small, 10_000: large}
    assert len(store.load(participant_stream(people[10]))) == 12
    with cost(store.engine) as whole:
        assert len(store.load(participant_stream(people[10_000]))) == 10_002
    assert whole.rows == 10_002  # the counter sees a fold of the stream

    for prior in people:  # warm-up: connections, caches
        _turn(services, worker, people[prior], phones[prior], 0)
    at = {prior: _turn(services, worker, people[prior], phones[prior], 1) for prior in people}

    assert at[10_000].statements == at[10].statements
    assert at[10_000].per_statement() == at[10].per_statement()
    assert at[10_000].rows == at[10].rows
    assert 0 < at[10].rows < 100, at[10].rows
    assert not any("llm_called" in s or "'llm.called'" in s for s in at[10_000].statements)

    # What the worker itself costs a turn, pinned so that a regression fails here: one pooled
    # connection for the claim and drain, 4 transactions, and 5 statements besides the append:
    # the candidates' head items, the lease (one upsert), the turn's read (the participant with
    # their head item's id, pending timers, the last messages, which hold the trigger); the
    # append's transaction then reads the next head item and, none being due, releases the
    # lease (in one statement on PostgreSQL). On PostgreSQL all but the append's run in
    # autocommit: no BEGIN and ROLLBACK or COMMIT round trips around them.
    # Before (issue 15): 8 checkouts, 8 transactions, 11 statements; then 1, 4 and 7.
    for turn in at.values():
        assert turn.checkouts == 1
        assert len(turn.transactions()) == 4, turn.transactions()
        assert len(turn.worker_statements()) == 5, turn.worker_statements()
        _reads_the_next_head_and_releases(turn)
        _reads_no_row_it_knows(turn)
        expected = turn.worker_statements() if store.engine.dialect.name == "postgresql" else []
        assert turn.autocommitted == expected

    timed = {prior: _timer_turn(services, worker, people[prior], phones[prior]) for prior in people}
    assert timed[10_000].per_statement() == timed[10].per_statement()
    assert timed[10_000].rows == timed[10].rows
    for turn in timed.values():
        assert turn.checkouts == 1
        assert len(turn.transactions()) == 4, turn.transactions()
        # the participant with their head item's id, the timer, pending timers, the window
        assert len(turn.worker_statements()) == 6, turn.worker_statements()
        _reads_the_next_head_and_releases(turn)
    store.engine.dispose()
