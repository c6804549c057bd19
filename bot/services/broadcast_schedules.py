"""A study's declared broadcasts (`broadcasts:` in study.yaml), made on their schedule: each
occurrence an ordinary broadcast (bot.services.broadcasts), and one that cannot be made an
event and an operator alert, never a silent gap.

The scheduler's leader calls `tick` at every beat. The events are the schedule's memory: an
occurrence is made once, under an id derived from `<study>/<name>@<date>` (a second try is
refused by the plan's stream), or recorded as failed (`broadcast.occurrence_failed` on the
system stream, keyed by the occurrence). An occurrence of date D is made from 00:00 UTC the
day before (so that each participant's own local time on D is still ahead, whatever their
timezone) until 00:00 UTC two days after; one whose window closed unmade after the schedule
began (its first occurrence made or failed) is recorded as missed. A failed or missed
occurrence does not stop the next one. A study nobody was ever allocated in (a shipped example
no deployment runs) makes nothing: its schedule begins with its first participant.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from bot.channel import outbound
from bot.interventions.validation.catalogue import Catalogue
from bot.services import broadcasts
from bot.services.refusal import Refused
from bot.store.event_store import ConcurrencyError, EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.broadcasts import BroadcastOccurrenceFailed
from bot.store.events import SYSTEM_STREAM, EventData, NewEvent, new_id
from bot.store.reads import broadcasts as reads
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import WEEKDAYS, DeclaredBroadcast

log = logging.getLogger(__name__)

NAMESPACE = uuid.UUID("5b0c7e52-4a0e-4a55-9a57-6f1d3d7b2c61")  # ids of declared occurrences
LOOKBACK = timedelta(weeks=8)  # how far back a missed occurrence is looked for


@dataclass(frozen=True)
class Occurrence:
    """One date of a study's declared broadcast."""

    study: str
    name: str
    day: date

    @property
    def schedule(self) -> str:
        return f"{self.study}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.schedule}@{self.day.isoformat()}"

    @property
    def broadcast_id(self) -> str:
        return str(uuid.uuid5(NAMESPACE, self.label))

    @property
    def opens(self) -> datetime:
        return datetime.combine(self.day - timedelta(days=1), time(0, 0), UTC)

    @property
    def closes(self) -> datetime:
        return datetime.combine(self.day + timedelta(days=2), time(0, 0), UTC)


def dates(declared: DeclaredBroadcast, first: date, last: date) -> list[date]:
    """The schedule's dates from `first` to `last` (both included), within its start and end."""
    first = max(first, declared.start or first)
    last = min(last, declared.end or last)
    found, day = [], first
    while day <= last:
        weekly = declared.schedule.every == "week"
        if not weekly or WEEKDAYS[day.weekday()] == declared.schedule.weekday:
            found.append(day)
        day += timedelta(days=1)
    return found


def tick(
    store: EventStore,
    interventions: Catalogue,
    studies: StudyCatalogue,
    now: datetime,
    operators: Sequence[str] = (),
) -> list[str]:
    """Make every open occurrence not made yet, record every missed one; returns what was
    done (`made <label>`, `failed <label>`). A study that does not validate has none (a process
    does not start with one), nor does one without participants yet."""
    done: list[str] = []
    for slug in studies.slugs():
        if studies.refusal(slug) is not None or not studies.study(slug).broadcasts:
            continue
        if not reads.study_in_use(store, slug):
            continue
        for name, declared in studies.study(slug).broadcasts.items():
            done += _schedule(store, interventions, slug, name, declared, now, operators)
    return done


def _schedule(
    store: EventStore,
    interventions: Catalogue,
    slug: str,
    name: str,
    declared: DeclaredBroadcast,
    now: datetime,
    operators: Sequence[str],
) -> list[str]:
    handled = _handled(store, f"{slug}/{name}")
    today = now.astimezone(UTC).date()
    done: list[str] = []
    if handled:
        since = max(min(handled), today - LOOKBACK)
        for day in dates(declared, since, today):
            occurrence = Occurrence(slug, name, day)
            if day not in handled and occurrence.closes <= now:
                why = "missed: nothing made it while its window was open (was the worker down?)"
                done += _failed(store, occurrence, why, operators)
                handled.add(day)
    for day in dates(declared, today - timedelta(days=2), today + timedelta(days=1)):
        occurrence = Occurrence(slug, name, day)
        if day in handled or not occurrence.opens <= now < occurrence.closes:
            continue
        done += _make(store, interventions, occurrence, declared, now, operators)
    return done


def _make(
    store: EventStore,
    interventions: Catalogue,
    occurrence: Occurrence,
    declared: DeclaredBroadcast,
    now: datetime,
    operators: Sequence[str],
) -> list[str]:
    what: dict[str, Any] = {"step": declared.step} if declared.step else {}
    request = {
        **what,
        "message": declared.message,
        "title": declared.title or occurrence.schedule,
        "filter": {
            "study": occurrence.study,
            "arm": declared.filter.arm,
            "condition": declared.filter.condition,
        },
        "send_at": {
            "mode": "local",
            "time": declared.schedule.time,
            "date": occurrence.day.isoformat(),
        },
    }
    try:
        planned = broadcasts.create(
            store,
            interventions,
            request,
            actor=f"study:{occurrence.study}",
            now=now,
            schedule=occurrence.label,
            broadcast_id=occurrence.broadcast_id,
        )
    except Refused as exc:
        return _failed(store, occurrence, str(exc), operators)
    except ConcurrencyError:
        return []  # another process made it a moment ago
    log.info("declared broadcast %s made for %d", occurrence.label, planned.recipients)
    return [f"made {occurrence.label}"]


def _failed(
    store: EventStore, occurrence: Occurrence, reason: str, operators: Sequence[str]
) -> list[str]:
    """The failure and its operator alert (texted to OPERATOR_PHONES), once per occurrence."""
    summary = (
        f"The study's broadcast {occurrence.schedule} made nothing for {occurrence.day}: "
        f"{reason}. The next occurrence will be tried as planned."
    )
    events: list[EventData] = [
        BroadcastOccurrenceFailed(
            schedule=occurrence.schedule, occurrence=occurrence.day.isoformat(), reason=reason
        ),
        AlertRaised(alert_id=new_id(), kind="broadcast", severity="warning", summary=summary),
    ]
    for phone in operators:
        events += outbound.to_address(phone, "sms", f"Tandem operator alert: {summary}", "alert")
    meta = {"actor": f"study:{occurrence.study}"}
    store.append(
        SYSTEM_STREAM,
        [NewEvent(e, meta=meta) for e in events],
        idempotency_key=f"broadcast-occurrence:{occurrence.label}",
    )
    log.warning("declared broadcast %s failed", occurrence.label)
    return [f"failed {occurrence.label}"]


def _handled(store: EventStore, schedule: str) -> set[date]:
    """The dates of the schedule's occurrences made or recorded as failed."""
    made = {
        date.fromisoformat(label.rsplit("@", 1)[1]) for label in reads.scheduled(store, schedule)
    }
    failed = {
        date.fromisoformat(e.data.occurrence)
        for e in store.read_all(event_types=[BroadcastOccurrenceFailed.event_type])
        if isinstance(e.data, BroadcastOccurrenceFailed) and e.data.schedule == schedule
    }
    return made | failed
