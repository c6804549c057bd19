"""A store folds the participants row's `memory` only through the fold the conversation hands
it (bot.store.projections.columns): without that fold registered it refuses to enroll, append
or replay, rather than keep the memory empty."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.conversation import memory
from bot.store.event_store import EventStore
from bot.store.events import Event, new_id, participant_stream
from bot.store.projections import columns, participants
from bot.store.projections.columns import ColumnFold, MissingColumnFold
from bot.store.replay import rebuild
from tests.factories import enrolled, received

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _event(data: object, version: int) -> Event:
    return Event(version, new_id(), "participant-x", version, data, {}, None, AT, AT)  # type: ignore[arg-type]  # test data of any event type


def test_the_participants_projection_refuses_an_enrollment_without_the_memory_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delitem(columns.FOLDS, "memory")
    with pytest.raises(MissingColumnFold, match="participants.memory"):
        participants.apply(None, _event(enrolled(), 1))


def test_the_participants_projection_refuses_an_event_on_a_row_with_a_memory_without_the_fold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    row = participants.apply(None, _event(enrolled(), 1))
    monkeypatch.delitem(columns.FOLDS, "memory")
    with pytest.raises(MissingColumnFold):
        participants.apply(row, _event(received(), 2))


def test_a_store_without_the_memory_fold_refuses_to_append_and_to_replay(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    monkeypatch.delitem(columns.FOLDS, "memory")
    with pytest.raises(MissingColumnFold):
        store.append(stream, [received()])
    assert len(store.load(stream)) == 1  # the refused append recorded nothing
    with pytest.raises(MissingColumnFold):
        rebuild(store)


def test_another_fold_for_the_memory_is_refused() -> None:
    other = ColumnFold(column="memory", empty=dict, apply=lambda value, _event: value)
    with pytest.raises(ValueError, match="another fold"):
        columns.register(other)
    assert columns.fold_of("memory") is memory.COLUMN_FOLD
