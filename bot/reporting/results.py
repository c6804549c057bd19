"""The tables a researcher analyses, folded from a participant's events (pure but for reading):
`results` (one row per measurement occasion: a question asked, and what became of it) and
`retrievals` (one row per document a retrieval found). Their columns, with a type and a
description each, are what the codebook (bot.reporting.codebook) describes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.reporting.cells import naive
from bot.reporting.transcript import local, zone
from bot.store.event_types.interventions import MeasurementRecorded, MeasurementRejected
from bot.store.event_types.retrieval import RetrievalDone
from bot.store.event_types.timers import MeasurementAsked, MeasurementMissed, TimerScheduled
from bot.store.events import Event


@dataclass(frozen=True)
class Column:
    """An exported column: its name, its type (the typed language's, or `datetime`: ISO 8601
    with the UTC offset, blank when there is none), and what it holds."""

    name: str
    type: str
    description: str
    options: tuple[str, ...] = ()


STATUSES = ("answered", "missed", "rejected", "pending", "cancelled")
RESULT_COLUMNS = (
    Column("participant_id", "text", "the participant (a study code when pseudonymised)"),
    Column("intervention", "text", "the intervention the participant was in when exported"),
    Column("question", "text", "the question's slug: its variable is measurements.<question>"),
    Column("timezone", "text", "the participant's IANA time zone: the local times' zone"),
    Column("scheduled_utc", "datetime", "when the question was due, in UTC"),
    Column("scheduled_local", "datetime", "when the question was due, participant-local"),
    Column("scheduled_local_naive", "naive datetime", "the same, the participant's wall clock"),
    Column("asked_utc", "datetime", "when the question was queued to be sent, in UTC"),
    Column("asked_local", "datetime", "when the question was queued to be sent, local"),
    Column("asked_local_naive", "naive datetime", "the same, the participant's wall clock"),
    Column("answered_utc", "datetime", "when the valid answer came, in UTC (blank if none)"),
    Column("answered_local", "datetime", "when the valid answer came, local (blank if none)"),
    Column("answered_local_naive", "naive datetime", "the same, the participant's wall clock"),
    Column(
        "value",
        "variable",
        "the answer, of the type of measurements.<question> in the codebook (blank unless "
        "answered, and for text answers in a pseudonymised export with free text dropped)",
    ),
    Column(
        "value_code",
        "number",
        "the answer as a code: for an options question the option's number as sent (1 for "
        "the first of the codebook's options), for a scale the number, for a yes/no question "
        "1 (yes) or 0 (no) (blank for text)",
    ),
    Column("value_label", "text", "for an options question, the option chosen (its label)"),
    Column("method", "text", "how the answer was read: parsed, llm or text (blank if none)"),
    Column("latency_seconds", "number", "seconds from asked to answered (blank if none)"),
    Column("attempts", "int", "replies that were not an answer (each re-asked once at most)"),
    Column(
        "status",
        "choice",
        "answered; missed (no answer in the window); rejected (no valid answer after the "
        "re-asks); pending (the window is still open); cancelled (pending when the "
        "participant withdrew, was erased, unenrolled or completed: no answer can come)",
        STATUSES,
    ),
)
RETRIEVAL_COLUMNS = (
    Column("participant_id", "text", "the participant (a study code when pseudonymised)"),
    Column("at_utc", "datetime", "when the retrieval ran"),
    Column("name", "text", "what templates called it: retrieved.<name>"),
    Column("library", "text", "the library searched"),
    Column("query", "text", "the query as rendered (free text: dropped with free text)"),
    Column("method", "choice", "bm25 or embeddings", ("bm25", "embeddings")),
    Column("model", "text", "the embedding model (blank for bm25)"),
    Column("step", "text", "the step the participant was in"),
    Column("when", "choice", "turn (a step's retrieve:) or action", ("turn", "action")),
    Column("rank", "int", "1 for the best document; blank when nothing matched"),
    Column("doc_id", "text", "the document's id (blank when nothing matched)"),
    Column("title", "text", "the document's title"),
    Column("score", "number", "its BM25 score or cosine similarity"),
    Column("digest", "text", "a hash of the document's text as the model read it"),
)
RESULT_TYPES: tuple[str, ...]
RESULT_TYPES = ("measurement.asked", "measurement.recorded", "measurement.rejected")
RESULT_TYPES += ("measurement.missed", "timer.scheduled")
# What ends a participant's part in the study: their pending occasions are cancelled.
ENDINGS = ("participant.withdrawn", "participant.erased", "participant.unenrolled")
ENDED_STATUSES = frozenset(("withdrawn", "completed"))
RESULT_TYPES += (*ENDINGS, "participant.status_changed")
RETRIEVAL_TYPES = ("retrieval.done",)


def result_rows(
    history: Iterable[Event], row: dict[str, Any], since: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per question asked (from `since` on), in the order they were asked."""
    tz_name = str(row.get("timezone") or "UTC")
    tz = zone(tz_name)
    due: dict[str, datetime] = {}
    occasions: list[dict[str, Any]] = []
    by_outbox: dict[str, dict[str, Any]] = {}
    for ev in history:
        data = ev.data
        kind = getattr(data, "event_type", "")
        if kind in ENDINGS or (
            kind == "participant.status_changed" and getattr(data, "status", "") in ENDED_STATUSES
        ):
            for occasion in occasions:
                if occasion["status"] == "pending":
                    occasion["status"] = "cancelled"
        elif isinstance(data, TimerScheduled):
            due[data.timer_id] = data.due_at
        elif isinstance(data, MeasurementAsked):
            scheduled = due.get(data.timer_id)
            occasion = {
                "participant_id": row["participant_id"],
                "intervention": row.get("intervention"),
                "question": data.measurement,
                "timezone": tz_name,
                **_times("scheduled", scheduled, tz),
                **_times("asked", ev.occurred_at, tz),
                "asked_at": ev.occurred_at,
                "attempts": 0,
                "status": "pending",
            }
            occasions.append(occasion)
            by_outbox[data.outbox_id] = occasion
        else:
            settled = _occasion(data, by_outbox, occasions)
            if settled is not None:
                _settle(settled, data, ev.occurred_at, tz)
    return [o for o in occasions if since is None or o["asked_at"] >= since]


def _occasion(
    data: Any, by_outbox: dict[str, dict[str, Any]], occasions: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The occasion an answer, rejection or miss belongs to: by its message, else the last
    occasion of that question still pending."""
    if not isinstance(data, MeasurementRecorded | MeasurementRejected | MeasurementMissed):
        return None
    outbox_id = getattr(data, "outbox_id", None)
    if outbox_id and outbox_id in by_outbox:
        return by_outbox[outbox_id]
    pending = [
        o for o in occasions if o["question"] == data.measurement and o["status"] == "pending"
    ]
    return pending[-1] if pending else None


def _settle(occasion: dict[str, Any], data: Any, at: datetime, tz: Any) -> None:
    if occasion["status"] not in ("pending", "rejected"):
        return
    if isinstance(data, MeasurementRecorded):
        value = data.value
        number = type(value) in (int, float)
        code = int(value) if type(value) is bool else value if number else None  # yes: 1
        occasion.update(
            _times("answered", at, tz),
            status="answered",
            value=value,
            value_code=code,
            value_label=value if type(value) is str and data.method != "text" else None,
            method=data.method,
            latency_seconds=round((at - occasion["asked_at"]).total_seconds(), 3),
        )
    elif isinstance(data, MeasurementRejected):
        occasion["attempts"] = data.attempt
        if data.final:
            occasion["status"] = "rejected"
    elif occasion["status"] == "pending":
        occasion["status"] = "missed"


def _times(name: str, at: datetime | None, tz: Any) -> dict[str, Any]:
    """A time's `<name>_utc`, `_local` and `_local_naive` cells (bot.reporting.columns)."""
    there = local(at, tz)
    return {f"{name}_utc": at, f"{name}_local": there, f"{name}_local_naive": naive(there)}


def coded(record: dict[str, Any], options: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """A results row with the `value_code` of an options answer: its option's number (from
    1) among the question's `options` (by question slug; none known: left blank)."""
    label = record.get("value_label")
    choices = options.get(record.get("question") or "")
    if label is None or not choices or label not in choices:
        return record
    return {**record, "value_code": list(choices).index(label) + 1}


def retrieval_rows(
    history: Iterable[Event], participant_id: str, since: datetime | None = None
) -> list[dict[str, Any]]:
    """One row per document found by each retrieval (one row with no document for a
    retrieval that matched nothing), in order."""
    rows: list[dict[str, Any]] = []
    for ev in history:
        data = ev.data
        if not isinstance(data, RetrievalDone) or (since is not None and ev.occurred_at < since):
            continue
        common = {
            "participant_id": participant_id,
            "at_utc": ev.occurred_at,
            "name": data.name,
            "library": data.library,
            "query": data.query,
            "method": data.method,
            "model": data.model,
            "step": data.step,
            "when": data.when,
        }
        if not data.documents:
            rows.append(common)
        for doc in data.documents:
            rows.append(
                {
                    **common,
                    "rank": doc.rank,
                    "doc_id": doc.id,
                    "title": doc.title,
                    "score": doc.score,
                    "digest": doc.digest,
                }
            )
    return rows
