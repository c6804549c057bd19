"""`tandem serve`'s web writers go first for SQLite's writer lock: while one waits, the
background child's writers do not start waiting, so a webhook waits for at most the
transaction that holds the lock, not for a queue of turns and sends."""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from bot.store.database import make_engine, writer_lock_path
from tests.conftest import fresh_database


@pytest.fixture
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return fresh_database("sqlite", request, tmp_path)


@pytest.fixture
def web(url: str) -> Iterator[Engine]:
    engine = make_engine(url, writer_priority="first")
    yield engine
    engine.dispose()


@pytest.fixture
def child(url: str) -> Iterator[Engine]:
    engine = make_engine(url, writer_priority="yield")
    yield engine
    engine.dispose()


def _gate_held(url: str) -> bool:
    """Whether a first writer holds the gate (waits for the writer lock)."""
    with open(f"{writer_lock_path(url)}-gate", "ab") as probe:
        try:
            fcntl.flock(probe.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe.fileno(), fcntl.LOCK_UN)
        return False


def _until(condition, what: str) -> None:
    """Wait for a condition another thread brings about (not a timing assertion)."""
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.001)


def test_a_child_writer_that_comes_while_a_web_writer_waits_goes_after_it(
    url: str, web: Engine, child: Engine
) -> None:
    order: list[str] = []

    def write(engine: Engine, who: str) -> None:
        with engine.begin() as conn:
            conn.execute(text("SELECT 1"))
            order.append(who)

    with child.begin() as held:  # a turn's transaction holds the lock
        held.execute(text("SELECT 1"))
        webhook = threading.Thread(target=write, args=(web, "web"))
        webhook.start()
        _until(lambda: _gate_held(url), "the web writer waits at the gate")
        send = threading.Thread(target=write, args=(child, "child"))
        send.start()
        order.append("held")
    webhook.join(timeout=60)
    send.join(timeout=60)

    assert order == ["held", "web", "child"]


def test_the_gate_is_free_once_the_web_writer_has_the_lock(url: str, web: Engine) -> None:
    with web.begin() as conn:
        conn.execute(text("SELECT 1"))
        assert not _gate_held(url)  # child writers may queue behind the web's transaction
    assert not _gate_held(url)
