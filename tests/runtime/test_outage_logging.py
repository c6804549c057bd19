"""A database outage is logged as a few lines (started, still down once a minute, back with its
duration), not as a traceback per thread per retry; and the lines carry no personal data."""

from __future__ import annotations

import logging
import random
import socket
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import make_url
from sqlalchemy.exc import OperationalError

from bot.channel.dispatcher import Dispatcher
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.worker import Worker
from bot.store import outage
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.sealing import Sealer
from bot.store.services import Services
from tests.conftest import TEST_MASTER_KEY, fresh_database
from tests.runtime.test_worker import echo


class FaultyPort:
    """A TCP port forwarding to PostgreSQL that can be cut (open connections dropped, new ones
    closed at once) and restored: a database outage without stopping the shared server."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.up = True
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            self.up = False
            for s in self.open:
                _close(s)
            self.open.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        _close(self.listener)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if not self.up:
                    _close(client)
                    continue
                server = socket.create_connection(self.target)
                self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    _close(src)
    _close(dst)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


def test_a_simulated_ten_minute_outage_from_eight_threads_logs_a_dozen_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    watch = outage.Outage(monotonic=lambda: now[0])
    caplog.set_level(logging.INFO, logger="bot")
    error = OperationalError("SELECT 1", {}, OSError("connection refused"))
    for _ in range(1200):  # ten minutes, a retry every half second, from each of 8 threads
        threads = [
            threading.Thread(target=watch.failed, args=(error, f"worker host:1/worker-{n}"))
            for n in range(8)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        now[0] += 0.5
    watch.succeeded(now[0])
    watch.succeeded(now[0])  # nothing more to say
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("database unavailable (OperationalError in worker")
    assert [line.split(" after ")[0] for line in lines[1:-1]] == [
        "database still unavailable"
    ] * 9  # at 60, 120, ... 540 s: once a minute
    assert lines[-1] == "database available again after 600 s (9600 failed tries)"
    assert not any(r.exc_info for r in caplog.records)


def test_a_try_that_began_before_the_outage_does_not_end_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A statement already on its way when the connection dropped may still succeed; it says
    nothing about the database now, so the outage goes on until a try begun after it succeeds."""
    now = [10.0]
    watch = outage.Outage(monotonic=lambda: now[0])
    caplog.set_level(logging.INFO, logger="bot")
    in_flight = watch.began()
    now[0] = 11.0
    watch.failed(OperationalError("SELECT 1", {}, OSError("reset")), "worker w1")
    now[0] = 12.0
    watch.succeeded(in_flight)  # began at 10 s, before the outage seen at 11 s
    assert watch.down
    now[0] = 15.0
    watch.succeeded(watch.began())
    assert not watch.down
    assert [r.getMessage() for r in caplog.records] == [
        "database unavailable (OperationalError in worker w1); background work retries quietly",
        "database available again after 4 s (1 failed tries)",
    ]


def test_another_error_still_logs_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("bot.test")
    caplog.set_level(logging.INFO, logger="bot")
    try:
        raise KeyError("a bug")
    except KeyError as exc:
        outage.loop_failed(log, exc, "worker w1")
    assert [r.exc_info is not None for r in caplog.records] == [True]


def test_workers_and_a_dispatcher_through_a_cut_database_log_one_line_each_way(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watch = outage.Outage()
    monkeypatch.setattr(outage, "OUTAGE", watch)
    url = make_url(fresh_database("postgresql", request, tmp_path))
    port = FaultyPort(url.host or "127.0.0.1", url.port or 5432)
    through = url.set(host="127.0.0.1", port=port.port).render_as_string(hide_password=False)
    store = EventStore(make_engine(through), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    settings = load_settings({"DATABASE_URL": through}, env_file=None)
    services = Services(settings=settings, store=store, clock=FakeClock())
    caplog.set_level(logging.INFO, logger="bot")
    stop = threading.Event()
    loops = [Worker(services, echo, f"host:1/worker-{n}").run_forever for n in range(4)]
    loops.append(
        Dispatcher(services, _Nothing(), "host:1/dispatch-0", rng=random.Random(1)).run_forever
    )
    threads = [threading.Thread(target=run, args=(stop, 0.02), daemon=True) for run in loops]
    try:
        for t in threads:
            t.start()
        time.sleep(0.5)
        port.cut()
        deadline = time.monotonic() + 10
        while watch._failures < 40 and time.monotonic() < deadline:  # many retries, all failing
            time.sleep(0.05)
        port.restore()
        deadline = time.monotonic() + 10
        while watch.down and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        services.signals.work.notify()
        services.signals.outbox.notify()
        for t in threads:
            t.join(5)
        port.close()
        store.engine.dispose()
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    messages = [r.getMessage() for r in logged]
    assert len(messages) == 2, messages
    assert messages[0].startswith("database unavailable (OperationalError in ")
    assert messages[1].startswith("database available again after ")
    assert not any(r.exc_info for r in logged)
    assert not any("SELECT" in m for m in messages)  # no statement (nor its values)


class _Nothing:
    """A messenger that is never reached (nothing is queued)."""

    sends_in_process = False

    def send(self, message: object) -> None:  # pragma: no cover - nothing is queued
        raise AssertionError("nothing should be sent")
