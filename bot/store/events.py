"""The event model: typed payloads, the registry from type string to model, and envelopes."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError


class EventData(BaseModel):
    """Base of every event payload. Subclasses set `event_type` and register themselves."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event_type: ClassVar[str]
    schema_version: ClassVar[int] = 1
    # Data protection (bot.store.personal): which text fields hold personal data, sealed with
    # the participant's data key, and which were judged not to. Every text field of an event
    # type is in one of the two (a test holds every registered type to it); an event type
    # that declares neither has all its text fields sealed.
    personal: ClassVar[frozenset[str] | None] = None
    plain: ClassVar[frozenset[str]] = frozenset()


class UnknownEventType(Exception):
    """An event type (or schema version) that this code has no model or upcaster for."""

    def __init__(self, event_type: str, schema_version: int, seq: int | None = None) -> None:
        where = f" at seq {seq}" if seq is not None else ""
        super().__init__(f"unknown event type {event_type!r} v{schema_version}{where}")
        self.event_type = event_type
        self.schema_version = schema_version
        self.seq = seq


class InvalidEventData(Exception):
    """A stored or proposed payload that does not match its model."""


REGISTRY: dict[str, type[EventData]] = {}
# (event_type, from_version) -> function turning a v(from_version) payload into v(from_version+1)
UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}

E = TypeVar("E", bound=type[EventData])


def event(event_type: str, schema_version: int = 1) -> Callable[[E], E]:
    """Register a payload model under its past-tense dotted type name."""

    def register(cls: E) -> E:
        if event_type in REGISTRY and REGISTRY[event_type] is not cls:
            raise ValueError(f"event type {event_type!r} registered twice")
        cls.event_type = event_type
        cls.schema_version = schema_version
        REGISTRY[event_type] = cls
        return cls

    return register


def decode(
    event_type: str, schema_version: int, data: Mapping[str, Any], seq: int | None = None
) -> EventData:
    """Turn a stored payload into its model, upcasting old schema versions first."""
    model = REGISTRY.get(event_type)
    if model is None:
        raise UnknownEventType(event_type, schema_version, seq)
    payload = data  # validated as it is (validation reads it): copied only to upcast
    version = schema_version
    while version < model.schema_version:
        upcast = UPCASTERS.get((event_type, version))
        if upcast is None:
            raise UnknownEventType(event_type, schema_version, seq)
        payload = upcast(dict(payload))
        version += 1
    if version != model.schema_version:
        raise UnknownEventType(event_type, schema_version, seq)
    try:
        # what `model.model_validate(payload)` runs, without its Python frame
        return model.__pydantic_validator__.validate_python(payload)
    except ValidationError as exc:
        where = f" at seq {seq}" if seq is not None else ""
        raise InvalidEventData(f"{event_type}{where}: {exc}") from exc


def encode(data: EventData) -> dict[str, Any]:
    """The JSON form of a payload, as stored."""
    return data.model_dump(mode="json")


def fields(*names: str) -> frozenset[str]:
    """Field names, for an event type's `personal` and `plain` declarations."""
    return frozenset(names)


def new_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class NewEvent:
    """An event proposed for appending: payload plus optional business time and metadata."""

    data: EventData
    occurred_at: datetime | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    event_id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        if not isinstance(self.data, EventData):
            raise InvalidEventData(f"not an event payload: {type(self.data).__name__}")
        if type(self.data) is not REGISTRY.get(self.data.event_type):
            raise InvalidEventData(f"unregistered event type {self.data.event_type!r}")
        if self.occurred_at is not None and self.occurred_at.tzinfo is None:
            raise InvalidEventData("occurred_at must be timezone-aware")


class _StreamParticipant:
    """`Event.participant_id`: the participant whose stream the event is on (None: the
    system's stream, a staff member's), worked out on first use and kept on the event. A
    non-data descriptor: once kept in the event's `__dict__`, the value is read from there
    as a plain attribute is (a fold asks it of each event once for each projection)."""

    def __get__(self, event: Event | None, owner: type | None = None) -> Any:
        if event is None:
            return self
        found = event.__dict__["participant_id"] = participant_of(event.stream_id)
        return found


@dataclass(frozen=True)
class Event:
    """An event as recorded in the store."""

    seq: int
    event_id: str
    stream_id: str
    stream_version: int
    data: EventData
    meta: Mapping[str, Any]
    idempotency_key: str | None
    occurred_at: datetime
    recorded_at: datetime

    participant_id: ClassVar[_StreamParticipant] = _StreamParticipant()  # str | None

    @property
    def event_type(self) -> str:
        return self.data.event_type


_new = object.__new__


def stored_event(  # noqa: PLR0913 - an Event's fields, in their order
    seq: int,
    event_id: str,
    stream_id: str,
    stream_version: int,
    data: EventData,
    meta: Mapping[str, Any],
    idempotency_key: str | None,
    occurred_at: datetime,
    recorded_at: datetime,
) -> Event:
    """The Event `Event(...)` makes of these fields, with its participant, made for a read of
    many stored rows (a replay's, a turn's history): its fields set in one update of its
    `__dict__` rather than by the frozen dataclass's `__init__`, which sets each through
    `object.__setattr__`, at about twice the cost.
    tests/store/test_events.py holds it to `Event`'s fields and to what `Event(...)` gives."""
    made = _new(Event)
    made.__dict__.update(
        seq=seq,
        event_id=event_id,
        stream_id=stream_id,
        stream_version=stream_version,
        data=data,
        meta=meta,
        idempotency_key=idempotency_key,
        occurred_at=occurred_at,
        recorded_at=recorded_at,
        participant_id=participant_of(stream_id),
    )
    return made


PARTICIPANT_PREFIX = "participant:"
# An unknown sender's stream (`sender:<sender id>`, a UUID): the messages of one phone number
# that matches no participant, sealed under a data key of their own so that they can be erased
# (`tandem erase --phone`) and expire (UNKNOWN_SENDER_RETENTION_DAYS). The number is found by
# its keyed hash (`sender_phones`), never stored in plain.
SENDER_PREFIX = "sender:"
SYSTEM_STREAM = "system"


def participant_stream(participant_id: str) -> str:
    return f"{PARTICIPANT_PREFIX}{participant_id}"


def participant_of(stream_id: str) -> str | None:
    if stream_id.startswith(PARTICIPANT_PREFIX):
        return stream_id[len(PARTICIPANT_PREFIX) :]
    return None


def sender_stream(sender_id: str) -> str:
    return f"{SENDER_PREFIX}{sender_id}"


def sender_of(stream_id: str) -> str | None:
    if stream_id.startswith(SENDER_PREFIX):
        return stream_id[len(SENDER_PREFIX) :]
    return None


def key_owner(stream_id: str) -> str | None:
    """Whose data key seals the personal fields of `stream_id`'s events: the participant's, or
    the unknown sender's (both ids are UUIDs, one namespace in `data_keys`); None: no one's
    (the system stream, a staff member's), stored plain."""
    return participant_of(stream_id) or sender_of(stream_id)
