"""Counting the SQL statements an engine issues, with SQLAlchemy's event listeners."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, event

_TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK")


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The statements executed meanwhile, whitespace collapsed (BEGIN/COMMIT left out)."""
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if not statement.startswith(_TRANSACTION):
            seen.append(" ".join(statement.split()))

    with _listening(engine, record):
        yield seen


@contextmanager
def executed(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    """(statement, parameters) of each statement executed meanwhile, as the driver got them
    (BEGIN/COMMIT left out): to be run again, under EXPLAIN, say."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        if not statement.startswith(_TRANSACTION):
            seen.append((statement, parameters))

    with _listening(engine, record):
        yield seen


@contextmanager
def _listening(engine: Engine, record: Callable[..., None]) -> Iterator[None]:
    event.listen(engine, "before_cursor_execute", record)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", record)
