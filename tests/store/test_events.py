"""The event envelope and decoding: `stored_event` makes the Event that `Event(...)` makes, an
event's participant is its stream's, and a stored payload decodes (upcast where it is old)
without being changed."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime
from typing import Any, ClassVar

import pytest

from bot.store import events as ev
from bot.store.events import (
    Event,
    EventData,
    InvalidEventData,
    UnknownEventType,
    decode,
    participant_stream,
    stored_event,
)
from tests.factories import received

AT = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def _fields(stream_id: str) -> dict[str, Any]:
    return {
        "seq": 7,
        "event_id": "e-7",
        "stream_id": stream_id,
        "stream_version": 3,
        "data": received("SM1", body="hello"),
        "meta": {"trace": "t"},
        "idempotency_key": None,
        "occurred_at": AT,
        "recorded_at": AT,
    }


@pytest.mark.parametrize(
    ("stream_id", "participant"),
    [(participant_stream("p-1"), "p-1"), ("system", None), ("staff:s-1", None)],
)
def test_a_stored_event_is_the_event_its_fields_make(stream_id: str, participant: Any) -> None:
    given = _fields(stream_id)
    made = stored_event(*given.values())
    built = Event(**given)
    assert made == built
    assert type(made) is Event
    assert dataclasses.asdict(made) == dataclasses.asdict(built)
    assert made.participant_id == built.participant_id == participant
    assert made.event_type == "message.received"
    # every field of Event is set, and nothing else but the participant kept beside them
    names = [f.name for f in dataclasses.fields(Event)]
    assert list(given) == names
    assert set(vars(made)) == {*names, "participant_id"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.seq = 8  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(made)) == made  # noqa: S301 - our own bytes


def test_an_events_participant_is_worked_out_once_and_follows_a_replaced_stream() -> None:
    event = Event(**_fields(participant_stream("p-1")))
    assert "participant_id" not in vars(event)
    assert event.participant_id == "p-1"
    assert vars(event)["participant_id"] == "p-1"  # kept: read as an attribute from now on
    moved = dataclasses.replace(event, stream_id=participant_stream("p-2"))
    assert moved.participant_id == "p-2"
    assert dataclasses.replace(event, stream_id="system").participant_id is None
    assert "participant_id" not in repr(event)  # not a field: repr and equality leave it out


class _Renamed(EventData):
    """A test type at schema version 3: v1 named its field `text`, v2 `words`."""

    event_type: ClassVar[str] = "test.renamed"
    schema_version: ClassVar[int] = 3
    plain: ClassVar[frozenset[str]] = frozenset({"body"})
    body: str


def _rename(old: str, new: str):  # noqa: ANN202
    def upcast(payload: dict[str, Any]) -> dict[str, Any]:
        payload[new] = payload.pop(old)  # in place: decode must hand it a copy
        return payload

    return upcast


@pytest.fixture
def renamed(monkeypatch: pytest.MonkeyPatch) -> type[_Renamed]:
    monkeypatch.setitem(ev.REGISTRY, _Renamed.event_type, _Renamed)
    monkeypatch.setitem(ev.UPCASTERS, (_Renamed.event_type, 1), _rename("text", "words"))
    monkeypatch.setitem(ev.UPCASTERS, (_Renamed.event_type, 2), _rename("words", "body"))
    return _Renamed


def test_an_old_payload_is_upcast_on_a_copy_and_a_current_one_read_as_it_is(
    renamed: type[_Renamed],
) -> None:
    old = {"text": "hi"}
    assert decode("test.renamed", 1, old) == renamed(body="hi")
    assert old == {"text": "hi"}  # the stored payload is not changed by its upcasting
    middle = {"words": "hey"}
    assert decode("test.renamed", 2, middle) == renamed(body="hey")
    assert middle == {"words": "hey"}
    current = {"body": "hello"}
    assert decode("test.renamed", 3, current) == renamed(body="hello")
    assert current == {"body": "hello"}


def test_a_payload_that_cannot_be_read_is_refused_with_where_it_is(
    renamed: type[_Renamed],
) -> None:
    with pytest.raises(UnknownEventType, match=r"'test.renamed' v4 at seq 9"):
        decode("test.renamed", 4, {"body": "x"}, seq=9)  # newer than this code
    with pytest.raises(UnknownEventType, match="'test.unknown' v1"):
        decode("test.unknown", 1, {})
    with pytest.raises(InvalidEventData, match=r"(?s)test.renamed at seq 5: .*body"):
        decode("test.renamed", 3, {"body": 5}, seq=5)
    with pytest.raises(InvalidEventData, match="extra"):
        decode("test.renamed", 3, {"body": "x", "stray": 1})  # extra fields forbidden
