"""Projections: pure reducers that fold events into rows, and the list of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.store.events import Event

Row = dict[str, Any]


@dataclass(frozen=True)
class Projection:
    """A table kept as a fold of events: which row an event touches, and how it changes it.

    `apply(row, event)` is pure: it returns the new row (a new dict) or the row it was given,
    unchanged. `columns` are the columns the fold owns; any other column of the table is
    operational (a lease, a claim) and is neither rebuilt nor compared by replay.
    A `stream_head` projection keeps one row per participant stream whose `version` column is
    the stream's version; the store locks that row to serialise appends to the stream.
    """

    name: str
    key_column: str
    columns: tuple[str, ...]
    key: Callable[[Event], str | None]
    apply: Callable[[Row | None, Event], Row | None]
    stream_head: bool = False


def all_projections() -> list[Projection]:
    """Every projection: each module here that defines PROJECTION; participants first."""
    import importlib
    import pkgutil

    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if isinstance(getattr(module, "PROJECTION", None), Projection):
            found.append(module.PROJECTION)
    return sorted(found, key=lambda p: (p.name != "participants", p.name))
