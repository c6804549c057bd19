"""Recurring schedules as chains of one-shot timers (pure): the timer of a series' first
occasion, and, when an occasion fires (or is skipped at firing), the next one.

A series is a `repeat:` (bot.timers.recurrence_format) of a question or an instrument. Each
occasion is an ordinary timer whose payload carries the series (`series`: its id, the
recurrence as written, the anchor and the occasion's index), so the next occasion is computed
from the timer alone, in the participant's current timezone and quiet hours
(bot.timers.recurrence). An occasion the recurrence skips is recorded
(`schedule.occasion_skipped`) and the chain goes on to the next: it ends only at the series'
`until`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from bot.core.localtime import QuietHours
from bot.store.event_types.occasions import OccasionSkipped
from bot.store.events import EventData
from bot.timers.one_shot import scheduled, zone_of
from bot.timers.recurrence import Occasion, next_occasion
from bot.timers.recurrence_format import Recurrence

_MOST_SKIPPED = 200  # occasions skipped in a row before giving up (a loud error, never silent)


def written(data: Mapping[str, Any]) -> dict[str, Any]:
    """A `repeat:` as plain JSON (YAML dates become ISO text), as timer payloads store it."""
    text = json.dumps(
        {("on" if key is True else key): value for key, value in data.items()}, default=str
    )
    return dict(json.loads(text))


def what_of(kind: str, payload: Mapping[str, Any]) -> str:
    return str(payload.get("instrument") or payload.get("measurement") or kind)


def first(
    participant: Mapping[str, Any],
    kind: str,
    payload: Mapping[str, Any],
    repeat: Mapping[str, Any],
    anchor: datetime,
    quiet: QuietHours | None,
    series_id: str,
) -> list[EventData]:
    """The skipped occasions before the first given one, and its timer (none: `until` came)."""
    at = anchor.astimezone(UTC).isoformat()
    series: dict[str, Any] = {"id": series_id, "repeat": written(repeat), "anchor": at}
    return _from(participant, kind, dict(payload), series, None, quiet)


def following(
    timer: Mapping[str, Any], participant: Mapping[str, Any], quiet: QuietHours | None
) -> list[EventData]:
    """After a series occasion (a timers row) fired or was skipped: the next occasion's timer,
    with the skipped ones before it recorded. Nothing for a timer of no series."""
    payload = dict(timer.get("payload") or {})
    series = payload.get("series")
    if not isinstance(series, Mapping):
        return []
    return _from(participant, str(timer["kind"]), payload, dict(series), series["index"], quiet)


def _from(
    participant: Mapping[str, Any],
    kind: str,
    payload: dict[str, Any],
    series: dict[str, Any],
    index: int | None,
    quiet: QuietHours | None,
) -> list[EventData]:
    recurrence = Recurrence.model_validate(series["repeat"])
    anchor = datetime.fromisoformat(str(series["anchor"]))
    tz = zone_of(participant)
    events: list[EventData] = []
    for _ in range(_MOST_SKIPPED):
        occasion = next_occasion(recurrence, anchor, tz, quiet, str(series["id"]), index)
        if occasion is None:
            return events
        if not occasion.skipped:
            return [*events, _timer(participant, kind, payload, series, occasion)]
        events.append(
            OccasionSkipped(
                series_id=str(series["id"]),
                what=what_of(kind, payload),
                index=occasion.index,
                local_date=occasion.local_date,
                planned_at=occasion.planned_utc,
                reason=str(occasion.reason),
            )
        )
        index = occasion.index
    raise ValueError(f"series {series['id']}: {_MOST_SKIPPED} occasions skipped in a row")


def _timer(
    participant: Mapping[str, Any],
    kind: str,
    payload: dict[str, Any],
    series: dict[str, Any],
    occasion: Occasion,
) -> EventData:
    planned = occasion.planned_utc.isoformat()
    at = {**series, "index": occasion.index, "planned": planned, "deferred": occasion.deferred}
    return scheduled(
        participant,
        kind,
        occasion.due_utc,
        scope=what_of(kind, payload),
        payload={**payload, "series": at},
    )
