"""Projections: pure reducers that fold events into rows, and the list of them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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
    `types` are the event types the fold reads (None: every type); an event of any other type
    leaves every row as it was, so the store and replay skip the projection for it
    (tests/store/test_projection_types.py holds each declaration to what `apply` does).
    """

    name: str
    key_column: str
    columns: tuple[str, ...]
    key: Callable[[Event], str | None]
    apply: Callable[[Row | None, Event], Row | None]
    stream_head: bool = False
    types: frozenset[str] | None = None


class Folding(dict[str, tuple[Projection, ...]]):
    """The projections that fold each event type (`folding[event_type]`), in their order,
    worked out once per type."""

    def __init__(self, projections: Iterable[Projection]) -> None:
        super().__init__()
        self.projections = tuple(projections)

    def __missing__(self, event_type: str) -> tuple[Projection, ...]:
        found = tuple(p for p in self.projections if p.types is None or event_type in p.types)
        self[event_type] = found
        return found


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
