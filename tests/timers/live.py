"""Real-time test helpers: wait on a condition (never a fixed sleep), run scheduler processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bot.store.event_store import EventStore
from bot.store.schema import events, timers

ROOT = Path(__file__).resolve().parents[2]


def wait_for(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    """Poll `condition` until it is truthy; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.02)


class SchedulerProcess:
    """A `tests.timers.scheduler_process` child and the leadership lines it prints."""

    def __init__(self, url: str, name: str, *args: str) -> None:
        self.name = name
        self.lines: list[dict[str, Any]] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.timers.scheduler_process", url, "--name", name, *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.errors: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain_errors, daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(json.loads(line))

    def _drain_errors(self) -> None:
        assert self.proc.stderr is not None
        self.errors.extend(self.proc.stderr)

    def became_leader(self) -> float | None:
        """When this process last became the leader (epoch seconds), if it did."""
        leads = [line["at"] for line in self.lines if line["event"] == "leader"]
        return leads[-1] if leads else None

    def kill(self) -> float:
        """SIGKILL: no clean-up of any kind runs. Returns when it happened."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        killed = time.time()
        self._close()
        return killed

    def stop(self) -> str:
        """SIGTERM and wait; returns what it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self._close()

    def _close(self) -> str:
        for reader in self._readers:
            reader.join(timeout=10)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdout.close()
        self.proc.stderr.close()
        return "".join(self.errors)


def outcome_counts(store: EventStore) -> dict[str, int]:
    """How many timers of the table are in each status."""
    with store.reading() as conn:
        rows = conn.execute(select(timers.c.status, func.count()).group_by(timers.c.status)).all()
    return {row[0]: row[1] for row in rows}


def firings_per_timer(store: EventStore) -> dict[str, int]:
    """timer_id -> number of `timer.fired` plus `timer.skipped` events recorded for it."""
    counts: dict[str, int] = {}
    with store.reading() as conn:
        for row in conn.execute(
            select(events.c.data).where(events.c.event_type.in_(["timer.fired", "timer.skipped"]))
        ):
            counts[row.data["timer_id"]] = counts.get(row.data["timer_id"], 0) + 1
    return counts
