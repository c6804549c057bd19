"""Administering instruments in a conversation (pure): the adapter an intervention reads its
`instruments:` through (bot.interventions.language.instrument_port), deciding the events and
the reply for each message of an administration, and `attach`, which loads an intervention's
instruments and hands it the adapter.

One per message: each reply is read as the current item's answer; an answer asks the next item,
the last one completes the administration (scored). All at once: one reply answers every item.
A reply that cannot be read is asked again, up to `reask` times, with the reason; after that the
administration is abandoned ("reasks"), as it is after `abandon_after_minutes` of silence.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bot.instruments import asking
from bot.instruments.format import Instrument
from bot.instruments.loader import SHIPPED, read_instrument
from bot.instruments.parsing import Value, parse_all, parse_answer
from bot.instruments.result import Result, last_values, result_types
from bot.instruments.scoring import score
from bot.interventions.language.instrument_port import Administered, Opening
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.problems import Problem
from bot.interventions.language.types import Type
from bot.store.event_types.instruments import (
    InstrumentAbandoned,
    InstrumentAnswerRejected,
    InstrumentCompleted,
    InstrumentItemAnswered,
)
from bot.store.events import EventData

DONE = "Thank you: that was the last question."
GIVEN_UP = "Sorry, I could not read that. We will leave these questions for now."


def nested(flat: Mapping[str, Any], base: str) -> dict[str, Any]:
    """{"instruments.phq9.last.items.i1": 2, ...} under `base` as nested dicts."""
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        parts = key[len(base) + 1 :].split(".")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return tree


@dataclass(frozen=True)
class Catalogue:
    """An intervention's instruments by name (the port bot.interventions reads them through)."""

    instruments: Mapping[str, Instrument]

    def names(self) -> list[str]:
        return list(self.instruments)

    def types(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for name, instrument in self.instruments.items():
            found |= result_types(name, instrument)
            found |= week_types(name, instrument)
        return found

    def last(self, name: str, result: Result | None) -> dict[str, Any]:
        """`instruments.<name>.last` as nested plain data."""
        base = f"instruments.{name}.last"
        return nested(last_values(name, self.instruments[name], result), base)

    def data(self, stored: Mapping[str, Any], now: datetime) -> dict[str, Any]:
        found = {}
        for name in self.instruments:
            last = self.last(name, None)
            known = stored.get(name) or {}
            if known.get("last"):
                items = {**last["items"], **(known["last"].get("items") or {})}
                last |= {**known["last"], "items": items}
            last["count"] = int(known.get("count") or 0)
            found[name] = {"last": last, "week": week(known.get("totals") or [], now)}
        return found

    def samples(self) -> dict[str, Any]:
        found = {}
        for name, instrument in self.instruments.items():
            answers = {item.id: _lowest(instrument, item.id) for item in instrument.items}
            at = datetime.fromisoformat("2026-03-02T09:00:00+00:00")
            result = Result(
                name, 1, 1, "completed", "one-per-message", at, at, score(instrument, answers)
            )
            week_of = {"count": 3, "mean": 4.5, "min": 2, "max": 7}
            found[name] = {"last": self.last(name, result), "week": week_of}
        return found

    def opening(self, name: str) -> Opening:
        instrument = self.instruments[name]
        mode = instrument.administration.mode
        minutes = float(instrument.administration.abandon_after_minutes)
        if mode == "all-at-once":
            return Opening(name, asking.all_at_once_message(instrument), None, mode, minutes)
        first = instrument.items[0]
        text = asking.item_message(instrument, first, first=True)
        return Opening(name, text, first.id, mode, minutes)

    def read(
        self,
        administering: Mapping[str, Any],
        stored: Mapping[str, Any],
        reply: str,
        now: datetime,
    ) -> Administered:
        return _Reading(self, administering, stored, now).read(reply)


def week_types(name: str, instrument: Instrument) -> dict[str, Type]:
    """`instruments.<name>.week.*`: the completed administrations of the 7 days before now
    (`count`) and their totals' `mean`, `min` and `max` (none without one)."""
    low, high = instrument.score_range()
    base = f"instruments.{name}.week"
    kind = "integer" if instrument.integral() else "number"
    return {
        f"{base}.count": Type("integer", bounds=(0, None)),
        f"{base}.mean": Type("number", bounds=(low, high)).maybe(),
        f"{base}.min": Type(kind, bounds=(low, high)).maybe(),
        f"{base}.max": Type(kind, bounds=(low, high)).maybe(),
    }


def week(totals: list[list[Any]], now: datetime) -> dict[str, Any]:
    """The `week` figures from the row's `totals` ([ended at, total]; a total may be none)."""
    since = now - timedelta(days=7)
    ended = [(datetime.fromisoformat(str(at)), total) for at, total in totals]
    recent = [total for at, total in ended if since < at <= now]
    scored = [total for total in recent if total is not None]
    mean = round(sum(scored) / len(scored), 2) if scored else None
    low, high = (min(scored), max(scored)) if scored else (None, None)
    return {"count": len(recent), "mean": mean, "min": low, "max": high}


def _lowest(instrument: Instrument, item_id: str) -> Value:
    answer = instrument.answer_of(instrument.item(item_id))
    if answer.type == "yes/no":
        return False
    if answer.type == "choice":
        return next(iter(answer.options or {"": ""}))
    low, _ = answer.range()
    return int(low) if low is not None and float(low).is_integer() else (low or 0)


class _Reading:
    """One reply to one administration in progress."""

    def __init__(
        self,
        catalogue: Catalogue,
        administering: Mapping[str, Any],
        stored: Mapping[str, Any],
        now: datetime,
    ) -> None:
        self.catalogue, self.asking, self.now = catalogue, administering, now
        self.name = str(administering["instrument"])
        self.instrument = catalogue.instruments[self.name]
        self.id = str(administering["administration_id"])
        self.count = int((stored.get(self.name) or {}).get("count") or 0)

    def read(self, reply: str) -> Administered:
        last_at = datetime.fromisoformat(str(self.asking["last_at"]))
        silence = timedelta(minutes=float(self.asking.get("abandon_minutes") or 120))
        if self.now > last_at + silence:
            return Administered([self.abandoned("silence")], reply=None)
        if self.asking.get("mode") == "all-at-once":
            return self.all_at_once(reply)
        return self.one_item(reply)

    def answers(self) -> dict[str, Any]:
        skipped = dict.fromkeys(self.asking.get("skipped") or [])
        return {**skipped, **(self.asking.get("answers") or {})}

    def one_item(self, reply: str) -> Administered:
        item = str(self.asking["item"])
        reading = parse_answer(self.instrument, item, reply)
        if not reading.ok:
            again = asking.item_message(self.instrument, self.instrument.item(item), first=False)
            return self.rejected(item, str(reading.problem), again)
        answers = {**self.answers(), item: reading.value}
        nxt = asking.next_item(self.instrument, answers)
        answered = self.answered(item, reading.value, reading.skipped, nxt.id if nxt else None)
        if nxt is not None:
            text = asking.item_message(self.instrument, nxt, first=False)
            return Administered([answered], reply=text)
        return self.completed([answered], answers)

    def all_at_once(self, reply: str) -> Administered:
        readings = parse_all(self.instrument, reply)
        if not readings.ok:
            hint = f"Reply with {len(self.instrument.items)} answers in order."
            return self.rejected(None, str(readings.problem), hint)
        events: list[EventData] = [
            self.answered(item, value, value is None, None)
            for item, value in readings.values.items()
        ]
        return self.completed(events, dict(readings.values))

    def answered(
        self, item: str, value: Value | None, skipped: bool, nxt: str | None
    ) -> InstrumentItemAnswered:
        return InstrumentItemAnswered(
            administration_id=self.id,
            instrument=self.name,
            item=item,
            value=None if skipped else value,
            skipped=skipped,
            next_item=nxt,
        )

    def rejected(self, item: str | None, problem: str, again: str) -> Administered:
        reasked = int(self.asking.get("reasked") or 0)
        final = not asking.may_reask(self.instrument, reasked)
        rejected = InstrumentAnswerRejected(
            administration_id=self.id,
            instrument=self.name,
            item=item,
            reason=problem,
            attempt=reasked + 1,
            final=final,
        )
        if final:
            return Administered(
                [rejected, self.abandoned("reasks")], reply=GIVEN_UP, abandoned=True
            )
        return Administered([rejected], reply=f"Sorry, I could not read that: {problem}.\n{again}")

    def completed(self, events: list[EventData], answers: dict[str, Any]) -> Administered:
        started = datetime.fromisoformat(str(self.asking["started_at"]))
        mode = str(self.asking.get("mode") or "one-per-message")
        number = int(self.asking.get("number") or 1)
        scored = score(self.instrument, answers)
        result = Result(
            self.name, number, self.count + 1, "completed", mode, started, self.now, scored
        )
        done = InstrumentCompleted(
            administration_id=self.id,
            instrument=self.name,
            number=number,
            count=self.count + 1,
            mode=mode,
            started_at=started,
            result=self.catalogue.last(self.name, result),
        )
        return Administered([*events, done], reply=DONE, completed=True)

    def abandoned(self, reason: str) -> InstrumentAbandoned:
        return InstrumentAbandoned(
            administration_id=self.id,
            instrument=self.name,
            number=int(self.asking.get("number") or 1),
            mode=self.asking.get("mode") or "one-per-message",
            started_at=datetime.fromisoformat(str(self.asking["started_at"])),
            reason=reason,
            answers={k: v for k, v in (self.asking.get("answers") or {}).items()},
        )


def attach(intervention: Intervention) -> tuple[Intervention, list[Problem]]:
    """The intervention with its `instruments:` loaded (the researcher's own `instruments/`
    beside `interventions/`, else the shipped ones), and the problems of any that cannot be."""
    names = intervention.config.instruments
    if not names:
        return intervention, []
    own = intervention.folder.resolve().parent.parent / "instruments"
    source = intervention.sources["config"]
    found: dict[str, Instrument] = {}
    problems: list[Problem] = []
    for n, name in enumerate(names):
        path = next(
            (p for folder in (own, SHIPPED) for p in (folder / f"{name}.yaml",) if p.is_file()),
            None,
        )
        if path is None:
            where = f"{own} or the shipped instruments"
            problems.append(
                Problem(
                    source.file, source.line("instruments", n), f"no instrument {name!r} in {where}"
                )
            )
            continue
        instrument, trouble = read_instrument(path)
        problems += trouble
        if instrument is not None:
            found[name] = instrument
    return dataclasses.replace(intervention, instruments=Catalogue(found)), problems
