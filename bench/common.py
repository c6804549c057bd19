"""Shared set-up for benchmarks: throwaway migrated databases on SQLite and PostgreSQL."""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bot.store.database import make_engine
from bot.store.migrate import upgrade

ADMIN_URL = os.environ.get(
    "BENCH_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


@contextmanager
def database(kind: str) -> Iterator[str]:
    """A fresh, migrated database URL of `kind` ("sqlite" or "postgresql"), removed after."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'bench.db'}"
            engine = make_engine(url)
            upgrade(engine)
            engine.dispose()
            yield url
        return
    name = f"tandem_bench_{uuid.uuid4().hex[:8]}"
    # pre-pinged: a bench that restarts PostgreSQL (bench/soak.py) still drops its database
    admin = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        engine = make_engine(url)
        upgrade(engine)
        engine.dispose()
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def percentile(values: list[float], pct: float) -> float:
    """The pct-th percentile (0-100) of values, by the inclusive method."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1]


# The scripted LLM stands in for a remote service: in production its CPU is not this machine's.
# It runs in a process of its own at the lowest CPU priority, so that it takes only what
# Tandem's processes leave rather than competing with them for the two cores.
LLM_NICENESS = 19


class _Forget(list):
    """The fake's request log, kept empty: a long run would hold every prompt in memory."""

    def append(self, item: object) -> None:
        pass


def _serve(answer: Callable[[dict], object], ready: mp.Queue, stop: object) -> None:
    from tests.fakes.openai_api import FakeOpenAI

    os.nice(LLM_NICENESS)
    fake = FakeOpenAI()
    fake._records = _Forget()  # noqa: SLF001
    fake.script(*[answer] * 2_000_000)
    ready.put(fake.url)
    stop.wait()  # type: ignore[attr-defined]
    fake.stop()


@contextmanager
def scripted_llm(answer: Callable[[dict], object]) -> Iterator[str]:
    """The URL of a scripted OpenAI-compatible server answering every request with
    `answer(request body)` at once, in a process of its own at niceness LLM_NICENESS; stopped
    after. `answer` must be a module-level function (it is pickled to the process)."""
    ready: mp.Queue = mp.Queue()
    stop = mp.Event()
    server = mp.Process(target=_serve, args=(answer, ready, stop), daemon=True)
    server.start()
    try:
        yield ready.get(timeout=30)
    finally:
        stop.set()
        server.join(timeout=10)


def wait_up(url: str, seconds: float = 90) -> None:
    """Wait until the web process at `url` answers /health with 200."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/health", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up within {seconds:.0f} s")
