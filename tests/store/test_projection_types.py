"""Each projection's `types` names every event type its fold reads: an event of any other type
leaves all its rows as they were (the store and replay skip it for those types), so a type left
out of a declaration fails here."""

from __future__ import annotations

import types
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

import bot.store.event_types  # noqa: F401  (registers every type)
from bot.store.events import REGISTRY, Event, EventData, participant_stream
from bot.store.projections import Folding, Projection, Row, all_projections

PID = "00000000-0000-4000-8000-000000000001"
AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
ENROLLED_ID = "e-enrolled"  # the enrollment's event id: the id of the work item it creates
# The ids every payload points at: the rows the setup below created.
IDS = {
    "participant_id": PID,
    "outbox_id": "o-1",
    "timer_id": "t-1",
    "alert_id": "a-1",
    "work_id": ENROLLED_ID,
    "email": "staff@example.org",
    "provider_sid": "SM-1",
    "broadcast_id": "b-1",
}


def _value(annotation: Any) -> Any:
    """A plain value of a field's type (the first choice of a Literal, the first type of a
    union that is not None)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _value(get_args(annotation)[0])
    if origin is Literal:
        return get_args(annotation)[0]
    if origin in (Union, types.UnionType):
        return _value(next(a for a in get_args(annotation) if a is not type(None)))
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple):
        return []
    if origin is dict or annotation is dict:
        return {"k": 1}
    if annotation is str or annotation is Any:
        return "x"
    if annotation is bool:
        return True
    if annotation is int:
        return 1
    if annotation is float:
        return 1.5
    if annotation is datetime:
        return AT
    if annotation is date:
        return AT.date()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _payload(annotation)
    raise AssertionError(f"no example value for {annotation!r}")


def _payload(model: type[BaseModel]) -> Any:
    """`model` with every field set: the ids above, else its default, else a value of its
    type."""
    values = {}
    for name, info in model.model_fields.items():
        if name in IDS:
            values[name] = IDS[name]
        elif not info.is_required():
            values[name] = info.get_default(call_default_factory=True)
        else:
            values[name] = _value(info.annotation)
    return model.model_construct(**values)


def _event(data: EventData, seq: int, event_id: str | None = None) -> Event:
    return Event(
        seq=seq,
        event_id=event_id or f"e-{seq}",
        stream_id=participant_stream(PID),
        stream_version=seq,
        data=data,
        meta={},
        idempotency_key=None,
        occurred_at=AT,
        recorded_at=AT,
    )


def _setup() -> dict[str, dict[str, Row]]:
    """Every projection's rows after an enrollment (with its work item), a queued message, a
    scheduled timer, a raised alert, a staff account, a takeover and an allocation: rows for
    the payloads above to move."""
    first = ["participant.enrolled", "message.queued", "timer.scheduled", "alert.raised"]
    first += ["staff.added", "takeover.started", "participant.allocated"]
    first += ["broadcast.created", "broadcast.planned"]
    rows: dict[str, dict[str, Row]] = {p.name: {} for p in all_projections()}
    for seq, kind in enumerate(first, start=1):
        ev = _event(_payload(REGISTRY[kind]), seq, ENROLLED_ID if seq == 1 else None)
        for projection in all_projections():
            key = projection.key(ev)
            if key is not None:
                after = projection.apply(rows[projection.name].get(key), ev)
                if after is not None:
                    rows[projection.name][key] = after
    assert all(rows.values()), {name: list(found) for name, found in rows.items()}
    return rows


@pytest.mark.parametrize("projection", all_projections(), ids=lambda p: p.name)
def test_a_projection_leaves_its_rows_as_they_were_for_a_type_it_does_not_declare(
    projection: Projection,
) -> None:
    rows = _setup()[projection.name]
    assert projection.types is None or projection.types <= set(REGISTRY)
    undeclared = sorted(t for t in REGISTRY if projection.types and t not in projection.types)
    for kind in undeclared:
        ev = _event(_payload(REGISTRY[kind]), 100)
        key = projection.key(ev)
        if key is None:
            continue
        before = rows.get(key)
        assert projection.apply(before, ev) == before, (
            f"{projection.name} folds {kind}: add it to the projection's types"
        )


# Declared types whose example payload leaves the setup's row as it is: an export and a
# sign-out are kept for the audit trail only (no column holds them), and the example role
# change names the role the account has.
UNMOVED = {"staff.exported", "staff.signed_out", "staff.role_changed"}


def test_every_type_a_projection_declares_moves_a_row_of_the_setup_or_creates_one() -> None:
    """The check above can fail: each declared type changes something from the setup's rows."""
    setup = _setup()
    for projection in all_projections():
        for kind in sorted(projection.types or ()):
            if kind in UNMOVED:
                continue
            ev = _event(_payload(REGISTRY[kind]), 100)
            key = projection.key(ev)
            assert key is not None, (projection.name, kind)
            before = setup[projection.name].get(key)
            moved = projection.apply(before, ev) != before
            assert moved or projection.apply(None, ev) is not None, (projection.name, kind)


def test_folding_gives_the_projections_of_a_type_in_their_order() -> None:
    projections = all_projections()
    folding = Folding(projections)
    # a broadcast's message settles its recipient's row (the broadcast_recipients projection)
    queued = ["participants", "broadcast_recipients", "outbox"]
    assert [p.name for p in folding["message.queued"]] == queued
    assert [p.name for p in folding["timer.fired"]] == ["participants", "timers", "work_items"]
    assert folding["no.such_type"] == tuple(p for p in projections if p.types is None)
