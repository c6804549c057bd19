"""Clocks: the only place that reads the time; everything else is handed `now`."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol


class Clock(Protocol):
    """Anything that tells the current time as an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """The wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FakeClock:
    """A clock that only moves when told to; for tests and the chat sandbox."""

    def __init__(self, start: datetime | None = None) -> None:
        start = start or datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        self._now = start.astimezone(UTC)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, delta: timedelta) -> datetime:
        with self._lock:
            self._now += delta
            return self._now

    def set(self, instant: datetime) -> None:
        if instant.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime")
        with self._lock:
            self._now = instant.astimezone(UTC)


class FileClock:
    """A simulated clock shared by processes: the time is the ISO instant written in `path`
    (TANDEM_CLOCK, only with TANDEM_SIMULATION; bench/soak.py moves it). Never in production:
    the settings refuse it without the flag, and the processes say at start it is simulated."""

    simulated = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None  # the file's (inode, mtime, size) last read
        self._now: datetime | None = None
        self.now()  # a missing or malformed file is refused at once, not at the first turn

    def now(self) -> datetime:
        with self._lock:
            stat = self.path.stat()
            seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)  # each write is a new inode
            if seen != self._seen or self._now is None:
                self._now = read_instant(self.path)
                self._seen = seen
            return self._now

    def set(self, instant: datetime) -> None:
        """Move the shared time to `instant` (the driver's side), atomically for readers."""
        write_instant(self.path, instant)


def read_instant(path: Path) -> datetime:
    """The aware instant written in a clock file (ValueError if it is not one)."""
    text = path.read_text(encoding="utf-8").strip()
    instant = datetime.fromisoformat(text)
    if instant.tzinfo is None:
        raise ValueError(f"{path}: the clock needs an aware instant, not {text!r}")
    return instant.astimezone(UTC)


def write_instant(path: Path, instant: datetime) -> None:
    """Write `instant` into a clock file by rename, so a reader never sees half of it."""
    if instant.tzinfo is None:
        raise ValueError("a clock file needs an aware datetime")
    part = path.with_name(path.name + ".part")
    part.write_text(instant.astimezone(UTC).isoformat(), encoding="utf-8")
    os.replace(part, path)


def clock_for(clock_file: Path | None) -> Clock:
    """The clock a process runs on: the wall clock, or the simulated FileClock TANDEM_CLOCK
    names (the settings allow that only with TANDEM_SIMULATION)."""
    return SystemClock() if clock_file is None else FileClock(clock_file)


def is_simulated(clock: Clock) -> bool:
    """Whether `clock` is a simulated one (the start log and /ready say so)."""
    return bool(getattr(clock, "simulated", False))
