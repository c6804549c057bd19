"""The typed result of administering an instrument: what conditions and templates read under
`instruments.<name>.last.*` (the last completed administration) with the type of each name,
and one row of instruments.csv per administration, with its columns described for the
codebook."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from bot.instruments.format import Instrument
from bot.instruments.scoring import Score
from bot.interventions.language.types import Type

Status = Literal["completed", "abandoned"]
STATUSES: tuple[Status, ...] = ("completed", "abandoned")
TEXT, INTEGER, NUMBER, YES_NO = Type("text"), Type("integer"), Type("number"), Type("yes/no")


@dataclass(frozen=True)
class Result:
    """One administration as it ended: `number` counts the participant's administrations of
    this instrument (1 for the first, abandoned ones included); `count` the completed ones up
    to this one; `ended_at` is when it was completed (its `administered_at`) or abandoned."""

    instrument: str
    number: int
    count: int
    status: Status
    mode: str
    started_at: datetime
    ended_at: datetime
    score: Score

    @property
    def administered_at(self) -> datetime | None:
        return self.ended_at if self.status == "completed" else None


def last_values(name: str, instrument: Instrument, last: Result | None) -> dict[str, Any]:
    """Plain data for every name in `result_types`, from the last completed administration
    (None before the first: every name is none but `count`, which is 0)."""
    base = f"instruments.{name}.last"
    values: dict[str, Any] = {key: None for key in result_types(name, instrument)}
    values[f"{base}.count"] = 0
    if last is None:
        return values
    score = last.score
    values |= {
        f"{base}.total": score.total,
        f"{base}.mean": score.mean,
        f"{base}.band": score.band,
        f"{base}.complete": score.complete,
        f"{base}.missing": list(score.missing),
        f"{base}.administered_at": last.ended_at.isoformat(),
        f"{base}.count": last.count,
    }
    for item_id, value in score.items.items():
        values[f"{base}.items.{item_id}"] = value
    for subscale, part in score.subscales.items():
        values[f"{base}.subscales.{subscale}.total"] = part.total
        values[f"{base}.subscales.{subscale}.mean"] = part.mean
        values[f"{base}.subscales.{subscale}.band"] = part.band
    return values


def result_types(name: str, instrument: Instrument) -> dict[str, Type]:
    """Every name under `instruments.<name>.last.*` with its type: bounds from the score and
    item ranges, band names as a choice, so that a comparison that can never hold
    (`total >= 30` when the total is at most 27) is refused. All may be none but `count`."""
    base = f"instruments.{name}.last"
    integral = Type("integer" if instrument.integral() else "number")
    types = {
        f"{base}.total": Type(integral.kind, bounds=instrument.score_range()),
        f"{base}.mean": Type("number", bounds=instrument.mean_range()),
        f"{base}.band": _bands(instrument, None),
        f"{base}.complete": YES_NO,
        f"{base}.missing": Type("list", item=Type("choice", tuple(i.id for i in instrument.items))),
        f"{base}.administered_at": TEXT,  # ISO 8601 with the UTC offset
    }
    for item in instrument.items:
        types[f"{base}.items.{item.id}"] = _item_type(instrument, item.id)
    for subscale in instrument.scoring.subscales:
        kind = "integer" if instrument.integral(subscale) else "number"
        key = f"{base}.subscales.{subscale}"
        types[f"{key}.total"] = Type(kind, bounds=instrument.score_range(subscale))
        types[f"{key}.mean"] = Type("number", bounds=instrument.mean_range(subscale))
        types[f"{key}.band"] = _bands(instrument, subscale)
    optional = {key: value.maybe() for key, value in types.items()}
    return optional | {f"{base}.count": Type("integer", bounds=(0, None))}


def _item_type(instrument: Instrument, item_id: str) -> Type:
    answer = instrument.answer_of(instrument.item(item_id))
    if answer.type == "yes/no":
        return YES_NO
    if answer.type == "choice":
        return Type("choice", tuple(answer.options or {}))
    kind = "integer" if answer.type == "scale" else "number"
    return Type(kind, bounds=answer.range())


def _bands(instrument: Instrument, subscale: str | None) -> Type:
    bands = instrument.bands_of(subscale)
    return Type("choice", tuple(band.name for band in bands)) if bands else Type("none")


@dataclass(frozen=True)
class Column:
    """A column of instruments.csv: its name, type and meaning (as bot.reporting.results.Column,
    kept here so this package imports no storage)."""

    name: str
    type: str
    description: str
    options: tuple[str, ...] = ()


COLUMNS = (
    Column("participant_id", "text", "the participant (a study code when pseudonymised)"),
    Column("intervention", "text", "the intervention the participant was in when exported"),
    Column("instrument", "text", "the instrument's name: its results are instruments.<name>"),
    Column("administration", "int", "1 for the participant's first administration of it, 2..."),
    Column("count", "int", "completed administrations of it so far, this one included"),
    Column("status", "choice", "how the administration ended", STATUSES),
    Column("mode", "choice", "how it was asked", ("one-per-message", "all-at-once")),
    Column("timezone", "text", "the participant's IANA time zone: the local times' zone"),
    Column("started_utc", "datetime", "when the first item was sent"),
    Column("ended_utc", "datetime", "when it was completed (administered_at) or abandoned"),
    Column("ended_local", "datetime", "the same, participant-local"),
    Column(
        "total",
        "number",
        "the score (sum or mean, by the instrument's scoring); blank "
        "unless every scored item was answered",
    ),
    Column("mean", "number", "the mean item score (reverse-scored items flipped); blank likewise"),
    Column("band", "text", "the band the total falls in (blank: none, or no total)"),
    Column("complete", "bool", "true when every item was answered"),
    Column("answered", "int", "how many items were answered"),
    Column(
        "missing",
        "text",
        "the items not answered (skipped or never reached), by id, separated by spaces",
    ),
    Column(
        "answers",
        "json",
        "each answered item's value by id, as recorded (not reversed): "
        "scale codes and numbers as numbers, yes/no as true/false, choices as their codes",
    ),
    Column("subscales", "json", "each subscale's total, mean and band by name ({} if none)"),
)


def row(result: Result, participant_id: str, intervention: str, timezone: str) -> dict[str, Any]:
    """The instruments.csv row of one administration, keyed by COLUMNS' names."""
    score = result.score
    subscales = {
        name: {"total": part.total, "mean": part.mean, "band": part.band}
        for name, part in score.subscales.items()
    }
    return {
        "participant_id": participant_id,
        "intervention": intervention,
        "instrument": result.instrument,
        "administration": result.number,
        "count": result.count,
        "status": result.status,
        "mode": result.mode,
        "timezone": timezone,
        "started_utc": result.started_at.isoformat(),
        "ended_utc": result.ended_at.isoformat(),
        "ended_local": result.ended_at.astimezone(ZoneInfo(timezone)).isoformat(),
        "total": score.total,
        "mean": score.mean,
        "band": score.band,
        "complete": score.complete,
        "answered": len(score.items),
        "missing": " ".join(score.missing),
        "answers": json.dumps(dict(score.items), ensure_ascii=False),
        "subscales": json.dumps(subscales, ensure_ascii=False),
    }
