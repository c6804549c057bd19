"""The questions a turn asks of the conversation memory (`Memory`), answered from its
named fields as the old folds over the whole stream answered them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from bot.conversation.memory.fold import fold
from bot.conversation.memory.model import MemoryDoc, Message, Question, of
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.habits import QuestionAsked
from bot.store.event_types.schedules import ScheduleCreated
from bot.store.events import Event


def remembered(row: Mapping[str, Any] | None, events: Iterable[Event] = ()) -> Memory:
    """The row's memory; folded from `events` when the row has none (a row built by hand in a
    test, with the whole stream as its history)."""
    found = of(row)
    return Memory(found if found is not None else fold(events))


class Memory:
    """Questions a turn asks of the memory, answered as the old folds over the stream were."""

    def __init__(self, memory: MemoryDoc) -> None:
        self.m = memory

    def replied_after(self, version: int) -> bool:
        """Whether a message (not a keyword) was received after stream version `version`."""
        return self.m["reply"] > version

    def superseded(self, version: int, kind: str) -> bool:
        """Whether a newer message of `kind` went to the participant after `version`."""
        return self.m["queued"].get(kind, 0) > version

    def _message(self, outbox_id: str) -> Message | None:
        for entry in self.m["awaited"]:
            if entry["outbox_id"] == outbox_id:
                return entry
        for entry in reversed(self.m["messages"]):
            if entry["outbox_id"] == outbox_id:
                return entry
        return None

    def queued(self, outbox_id: str) -> tuple[int, str] | None:
        """The stream version and kind of the message queued as `outbox_id`."""
        found = self._message(outbox_id)
        return (found["version"], found["kind"]) if found else None

    def sent_version(self, outbox_id: str) -> int | None:
        """The stream version at which the message `outbox_id` was first known sent."""
        found = self._message(outbox_id)
        return found["sent"] if found else None

    def sent_before(self, outbox_id: str, version: int | None) -> bool:
        sent = self.sent_version(outbox_id)
        return sent is not None and (version is None or sent < version)

    def scheduled_version(self, timer_id: str) -> int:
        """The stream version at which `timer_id` was scheduled (0 if not remembered)."""
        return next((t["version"] for t in self.m["timers"] if t["timer_id"] == timer_id), 0)

    def live_schedules(self) -> dict[str, ScheduleCreated]:
        return {
            s["schedule_id"]: ScheduleCreated.model_validate(s["created"])
            for s in self.m["schedules"]
        }

    def open_questions(self, before: int | None = None) -> list[QuestionAsked]:
        """As bot.conversation.daily_cycle.questions.open_questions over the stream: the
        unanswered questions of the latest prompt asked before `before`, sent before it."""
        latest: list[Question] = []
        for q in self.m["questions"]:
            if before is None or q["version"] < before:
                prompt = q["asked"]["prompt_outbox_id"]
                if latest and latest[-1]["asked"]["prompt_outbox_id"] != prompt:
                    latest = []
                latest.append(q)
        answered = set(self.m["answered"])
        return [
            QuestionAsked.model_validate(q["asked"])
            for q in latest
            if q["asked"]["question_id"] not in answered
            and q["sent"] is not None
            and (before is None or q["sent"] < before)
        ]

    def asked_on(self, kind: str, day: date) -> bool:
        return self.m["asked_on"].get(kind) == day.isoformat()

    def last_texted(self) -> datetime | None:
        return _when(self.m["texted_at"])

    def texted_by_severity(self) -> dict[str, datetime]:
        """Severity -> when supervisors were last texted about an alert of that severity (the
        most severe the text was about)."""
        return {k: v for k, v in ((s, _when(t)) for s, t in self.m["texted"].items()) if v}

    def last_alerted(self) -> datetime | None:
        return _when(self.m["alerted_at"])

    @property
    def flagged(self) -> bool:
        return self.m["flagged"]

    @property
    def contacted(self) -> bool:
        return self.m["contacted"]

    @property
    def visits(self) -> int:
        return self.m["visits"]

    def said(self, step: str) -> int:
        return self.m["replies"].get(step, 0)

    def received_before(self, version: int) -> datetime | None:
        """When the latest remembered message received before stream version `version` came."""
        times = [
            datetime.fromisoformat(r["at"]) for r in self.m["received"] if r["version"] < version
        ]
        return max(times) if times else None

    def verdicts_after(self, measurement: str, version: int) -> set[str]:
        kept = self.m["verdicts"].get(measurement) or {}
        return {kind for kind, at in kept.items() if at > version}

    def alert(self, alert_id: str) -> tuple[AlertRaised, bool] | None:
        """One of the last alerts for supervisors (without its quote, kept sealed in the
        event only) and whether it was closed."""
        for found in self.m["alerts"]:
            if found["alert_id"] == alert_id:
                return AlertRaised.model_validate(found["raised"]), found["closed"]
        return None

    def last_prompt(self) -> Mapping[str, Any] | None:
        return self.m["prompt"]

    def crisis_after(self, version: int) -> bool:
        """Whether a crisis alert was raised after stream version `version`."""
        return self.m["crisis"] > version

    def retrievals(self) -> dict[str, Mapping[str, Any]]:
        """Retrieval name -> what its last `retrieval.done` found: `library`, and `documents`
        (each id, title, score, rank, digest), best first."""
        return dict(self.m["retrievals"])


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
