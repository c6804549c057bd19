"""The conversation memory's stored shape (version `VERSION`), its bounds, and the upcaster
that reads the positional JSON of version 0 (`{"format": 1, ...}`) as today's named one.

The document stays plain JSON (dicts, lists, strings and numbers): it is the participants
row's `memory` column as the database gives it back, read and folded without converting it to
objects and back on every append. Its entries are TypedDicts, so code names their fields
(`entry["outbox_id"]`) where version 0 read them by position (`e[0]`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

VERSION = 2  # the `v` of the stored document; a change to what it holds bumps it
LEGACY_FORMAT = 1  # version 0: no `v`, `"format": 1`, entries as positional lists
RING = 64  # queued messages and scheduled timers remembered for later references
QUESTIONS = 8  # habit questions remembered: those of the last prompts (two a prompt)
SMALL_RING = 16  # received messages, awaited messages, alerts


class Received(TypedDict):
    version: int  # stream version of a message received
    at: str  # when it came (ISO, UTC)


class Message(TypedDict):
    outbox_id: str  # a message queued (to the participant or about them)
    version: int  # stream version of its message.queued
    kind: str
    sent: int | None  # stream version at which it was first known sent


class Timer(TypedDict):
    timer_id: str
    version: int  # stream version of its timer.scheduled


class Question(TypedDict):
    version: int  # stream version of its question.asked
    asked: dict[str, Any]  # the QuestionAsked data (JSON)
    sent: int | None  # stream version at which its message was first known sent


class Schedule(TypedDict):
    schedule_id: str
    created: dict[str, Any]  # the ScheduleCreated data (JSON)


class Alert(TypedDict):
    alert_id: str
    raised: dict[str, Any]  # the AlertRaised data (JSON)
    closed: bool  # acknowledged or resolved since


class Prompt(TypedDict):
    body: str | None  # the last habit prompt
    at: str
    answer: Any  # the habit.reported answer to it, if any


class Retrieval(TypedDict):
    library: str
    documents: list[dict[str, Any]]  # ids, titles, scores, ranks, digests: best first


class MemoryDoc(TypedDict):
    """What a turn decides on that the row's other columns do not hold, all of it bounded."""

    v: int  # VERSION
    reply: int  # stream version of the last message received that was not a keyword
    received: list[Received]  # the last SMALL_RING messages received
    queued: dict[str, int]  # kind -> version of the last message of that kind to them
    contacted: bool  # whether any message of the conversation was queued to them
    prompt: Prompt | None
    texted_at: str | None  # when supervisors were last texted about them (an alert text)
    # severity -> when supervisors were last texted about an alert whose most severe was that
    texted: dict[str, str]
    alerted_at: str | None  # the last alert.raised asking for supervisors
    flagged: bool  # crisis alert since the intervention's last reply
    crisis: int  # stream version of the last crisis alert
    schedules: list[Schedule]  # live, in order of creation
    replies: dict[str, int]  # step slug -> step.replied count
    visits: int  # step.entered count
    questions: list[Question]  # the last QUESTIONS asked
    answered: list[str]  # the question ids of those that were answered
    # question kind -> the latest local date one was asked (prompts ask "was one asked
    # today?", and today is never before it)
    asked_on: dict[str, str]
    messages: list[Message]  # the last RING queued
    awaited: list[Message]  # those a question, measurement or timer refers to (SMALL_RING)
    timers: list[Timer]  # the last RING scheduled
    verdicts: dict[str, dict[str, int]]  # measurement -> {verdict event type: last version}
    alerts: list[Alert]  # the last SMALL_RING raised asking for supervisors
    # retrieval name -> what its last retrieval.done found (one entry a name an intervention
    # declares: bounded)
    retrievals: dict[str, Retrieval]


def empty() -> MemoryDoc:
    return {
        "v": VERSION,
        "reply": 0,
        "received": [],
        "queued": {},
        "contacted": False,
        "prompt": None,
        "texted_at": None,
        "texted": {},
        "alerted_at": None,
        "flagged": False,
        "crisis": 0,
        "schedules": [],
        "replies": {},
        "visits": 0,
        "questions": [],
        "answered": [],
        "asked_on": {},
        "messages": [],
        "awaited": [],
        "timers": [],
        "verdicts": {},
        "alerts": [],
        "retrievals": {},
    }


def upcast(stored: Mapping[str, Any]) -> MemoryDoc | None:
    """`stored` as a document of this version: itself (a copy) when it is one, version 1 with
    its one alert-text time read per severity (issue 64), read from version 0's positional
    lists when it is of that; None for any other (left for replay to
    rewrite, never guessed at)."""
    if stored.get("v") == VERSION:
        return cast(MemoryDoc, dict(stored))
    if stored.get("v") == 1:
        return cast(MemoryDoc, {**stored, "v": VERSION, "texted": _texted(stored)})
    if "v" not in stored and stored.get("format") == LEGACY_FORMAT:
        return _from_v0(stored)
    return None


def current(stored: Any) -> Any:
    """A stored memory as this version reads it (an older version upcast; anything else as
    it is), for replay's comparison."""
    if isinstance(stored, Mapping):
        found = upcast(stored)
        return stored if found is None else found
    return stored


def readable(stored: Any) -> bool:
    """Whether a stored memory is one this version reads (itself or upcast)."""
    return isinstance(stored, Mapping) and upcast(stored) is not None


def of(row: Mapping[str, Any] | None) -> MemoryDoc | None:
    """The row's memory, or None when it has none this version reads (a row to replay)."""
    found = (row or {}).get("memory")
    return upcast(found) if isinstance(found, Mapping) else None


def _message(e: list[Any]) -> Message:
    return {"outbox_id": e[0], "version": e[1], "kind": e[2], "sent": e[3]}


def _texted(old: Mapping[str, Any]) -> dict[str, str]:
    """Version 1 and 0 kept one time for any alert text: read as the least severity's, so that
    after the upgrade every alert is texted rather than one held back."""
    if "texted" in old:
        return dict(old["texted"])
    return {"info": old["texted_at"]} if old.get("texted_at") else {}


def _from_v0(old: Mapping[str, Any]) -> MemoryDoc:
    """Version 0 (`bot.conversation.memory` until issue 60): the same facts, entries by position."""
    doc = empty()
    doc["reply"] = old["reply"]
    doc["queued"] = old["queued"]
    doc["contacted"] = old["contacted"]
    doc["texted_at"] = old["texted_at"]
    doc["texted"] = _texted(old)
    doc["alerted_at"] = old["alerted_at"]
    doc["flagged"] = old["flagged"]
    doc["crisis"] = old.get("crisis") or 0
    doc["replies"] = old["replies"]
    doc["visits"] = old["visits"]
    doc["answered"] = old["answered"]
    doc["asked_on"] = old["asked_on"]
    doc["verdicts"] = old["verdicts"]
    doc["retrievals"] = dict(old.get("retrievals") or {})
    prompt = old["prompt"]
    if prompt is not None:
        doc["prompt"] = {"body": prompt["body"], "at": prompt["at"], "answer": prompt["answer"]}
    doc["received"] = [{"version": r[0], "at": r[1]} for r in old["received"]]
    doc["schedules"] = [{"schedule_id": s[0], "created": s[1]} for s in old["schedules"]]
    doc["questions"] = [{"version": q[0], "asked": q[1], "sent": q[2]} for q in old["questions"]]
    doc["messages"] = [_message(e) for e in old["messages"]]
    doc["awaited"] = [_message(e) for e in old["awaited"]]
    doc["timers"] = [{"timer_id": t[0], "version": t[1]} for t in old["timers"]]
    doc["alerts"] = [{"alert_id": a[0], "raised": a[1], "closed": a[2]} for a in old["alerts"]]
    return doc
