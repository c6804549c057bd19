"""The participants row's instrument state, in `step_counters`: `administering` (the
administration awaiting an answer, or None) and `instruments` (per instrument: `number`, the
administrations started; `count`, the completed ones; `last`, the last completed result as
conditions read it under `instruments.<name>.last`; `totals`, the latest completed totals with
when each ended, for `instruments.<name>.week`). A fold of the instrument.* events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.store.event_types.instruments import (
    InstrumentAbandoned,
    InstrumentAnswerRejected,
    InstrumentCompleted,
    InstrumentItemAnswered,
    InstrumentStarted,
)
from bot.store.events import Event

Row = dict[str, Any]
KEPT = 200  # the latest completed totals kept per instrument (`totals`: [ended at, total])


def _counters(row: Row, **changes: Any) -> Row:
    return {**row, "step_counters": {**(row.get("step_counters") or {}), **changes}}


def _administering(row: Row, administration_id: str) -> dict[str, Any] | None:
    found = (row.get("step_counters") or {}).get("administering")
    return found if found and found.get("administration_id") == administration_id else None


def _of(row: Row, instrument: str) -> dict[str, Any]:
    known = (row.get("step_counters") or {}).get("instruments") or {}
    return dict(known.get(instrument) or {"number": 0, "count": 0, "last": None})


def _with(row: Row, instrument: str, **changes: Any) -> Row:
    known = dict((row.get("step_counters") or {}).get("instruments") or {})
    known[instrument] = {**_of(row, instrument), **changes}
    return _counters(row, instruments=known)


def _started(row: Row, event: Event) -> Row:
    data: InstrumentStarted = event.data  # type: ignore[assignment]  # the reducer of this event type only
    asking = {
        "administration_id": data.administration_id,
        "instrument": data.instrument,
        "number": data.number,
        "mode": data.mode,
        "item": data.item,
        "outbox_id": data.outbox_id,
        "started_at": event.occurred_at.isoformat(),
        "last_at": event.occurred_at.isoformat(),
        "abandon_minutes": data.abandon_minutes,
        "answers": {},
        "skipped": [],
        "reasked": 0,
    }
    return _with(_counters(row, administering=asking), data.instrument, number=data.number)


def _item_answered(row: Row, event: Event) -> Row:
    data: InstrumentItemAnswered = event.data  # type: ignore[assignment]  # the reducer of this event type only
    asking = _administering(row, data.administration_id)
    if asking is None:
        return row
    answers, skipped = dict(asking["answers"]), list(asking["skipped"])
    if data.skipped:
        skipped.append(data.item)
    else:
        answers[data.item] = data.value
    changed = {"answers": answers, "skipped": skipped, "item": data.next_item, "reasked": 0}
    changed["last_at"] = event.occurred_at.isoformat()
    return _counters(row, administering={**asking, **changed})


def _answer_rejected(row: Row, event: Event) -> Row:
    data: InstrumentAnswerRejected = event.data  # type: ignore[assignment]  # the reducer of this event type only
    asking = _administering(row, data.administration_id)
    if asking is None:
        return row
    changed = {"reasked": data.attempt, "last_at": event.occurred_at.isoformat()}
    return _counters(row, administering={**asking, **changed})


def _completed(row: Row, event: Event) -> Row:
    data: InstrumentCompleted = event.data  # type: ignore[assignment]  # the reducer of this event type only
    if _administering(row, data.administration_id) is not None:
        row = _counters(row, administering=None)
    totals = list(_of(row, data.instrument).get("totals") or [])
    totals = [*totals, [event.occurred_at.isoformat(), data.result.get("total")]][-KEPT:]
    return _with(row, data.instrument, count=data.count, last=dict(data.result), totals=totals)


def _abandoned(row: Row, event: Event) -> Row:
    data: InstrumentAbandoned = event.data  # type: ignore[assignment]  # the reducer of this event type only
    if _administering(row, data.administration_id) is None:
        return row
    return _counters(row, administering=None)


INSTRUMENT_CASES: dict[str, Callable[[Row, Event], Row]] = {
    InstrumentStarted.event_type: _started,
    InstrumentItemAnswered.event_type: _item_answered,
    InstrumentAnswerRejected.event_type: _answer_rejected,
    InstrumentCompleted.event_type: _completed,
    InstrumentAbandoned.event_type: _abandoned,
}
