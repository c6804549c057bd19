"""The port through which a layer above the store folds a participants-row column it owns.

The store is the bottom layer and imports nothing above it, yet the `participants` row keeps
columns whose meaning belongs to the conversation (`memory`: bot.conversation.memory). The
projection folds such a column through a `ColumnFold` the composition root registers
(`bot.runtime.bootstrap.register_column_folds`) before it builds a store; a store that meets
an event without the fold refuses (`MissingColumnFold`) rather than keep the column empty,
which a later turn would read as "nothing happened" and replay would call clean.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.store.events import Event


def _present(value: Any) -> bool:
    return value is not None


def _as_is(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class ColumnFold:
    """How one JSON column is folded, pure: `empty()` at enrollment, then
    `apply(value, event)` for every event of the stream (a new value, never `value` changed).
    `readable(value)` says whether a stored value is one the owner can read as it is (a value
    of an unknown version is not: the row must be rebuilt from its stream first); `current(value)`
    is a stored value as this version reads it (an older version upcast), so that replay does
    not call a row that reads the same a difference."""

    column: str
    empty: Callable[[], Any]
    apply: Callable[[Any, Event], Any]
    readable: Callable[[Any], bool] = _present
    current: Callable[[Any], Any] = _as_is


class MissingColumnFold(RuntimeError):
    """A projection met an event for a column whose fold was never registered."""


FOLDS: dict[str, ColumnFold] = {}


def register(fold: ColumnFold) -> None:
    """Fold `fold.column` with `fold` in every store of this process (again: no change; a
    different fold for a column already registered is refused)."""
    found = FOLDS.get(fold.column)
    if found is not None and found != fold:
        raise ValueError(f"column {fold.column!r} already has another fold registered")
    FOLDS[fold.column] = fold


def fold_of(column: str) -> ColumnFold:
    """The fold registered for `column`; refuses when there is none."""
    found = FOLDS.get(column)
    if found is None:
        raise MissingColumnFold(
            f"participants.{column}: no fold registered for this column, so the store cannot "
            "keep it; build stores through bot.runtime.bootstrap (or call "
            "bot.runtime.bootstrap.register_column_folds() first)"
        )
    return found
