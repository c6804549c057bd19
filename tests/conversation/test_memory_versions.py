"""A stored memory of version 0 (positional lists, `{"format": 1}`: bot.conversation.memory before
issue 60) reads as the named document of today's version, answers the same, and is rewritten
as today's version at the row's next event; a version this code does not know is not guessed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from bot.conversation import memory
from bot.store import replay
from bot.store.event_store import EventStore
from bot.store.events import Event, new_id, participant_stream
from bot.store.projections import participants
from bot.store.schema import participants as participants_table
from tests.conversation.test_memory import START, Stream
from tests.factories import enrolled, received

# A version-0 document as bot.conversation.memory stored it: every entry a list, read by position.
V0: dict[str, Any] = {
    "format": 1,
    "reply": 9,
    "received": [[3, "2026-01-05T09:21:00+00:00"], [9, "2026-01-05T10:03:00+00:00"]],
    "queued": {"prompt": 5, "reminder": 7},
    "contacted": True,
    "prompt": {"body": "Did you walk today?", "at": "2026-01-05T09:35:00+00:00", "answer": None},
    "texted_at": None,
    "alerted_at": "2026-01-05T09:50:00+00:00",
    "flagged": True,
    "schedules": [],
    "replies": {"intro": 2},
    "visits": 3,
    "questions": [],
    "answered": [],
    "asked_on": {"walk": "2026-01-05"},
    "messages": [["o-prompt", 5, "prompt", 6], ["o-reminder", 7, "reminder", None]],
    "awaited": [["o-prompt", 5, "prompt", 6]],
    "timers": [["t-1", 4], ["t-2", 8]],
    "verdicts": {"steps": {"measurement.recorded": 8}},
    "alerts": [],
}  # no "crisis" nor "retrievals": documents stored before either was added


def _as_version_0(doc: memory.MemoryDoc) -> dict[str, Any]:
    """`doc` laid out as version 0 stored it: each entry a list, in the order of its fields."""

    def rows(name: str) -> list[list[Any]]:
        return [list(entry.values()) for entry in doc[name]]  # type: ignore[literal-required]  # the names of the entry lists

    old: dict[str, Any] = {k: v for k, v in doc.items() if k != "v"}
    for name in ("received", "schedules", "questions", "messages", "awaited", "timers", "alerts"):
        old[name] = rows(name)
    return {"format": 1, **old}


def test_a_version_0_memory_answers_by_name_what_its_positions_held() -> None:
    read = memory.Memory(memory.upcast(V0))  # type: ignore[arg-type]  # V0 is of a known version
    assert read.queued("o-prompt") == (5, "prompt") and read.queued("o-reminder") == (7, "reminder")
    assert read.sent_version("o-prompt") == 6 and read.sent_version("o-reminder") is None
    assert read.scheduled_version("t-2") == 8 and read.scheduled_version("t-9") == 0
    assert read.received_before(9) == datetime(2026, 1, 5, 9, 21, tzinfo=UTC)
    assert read.replied_after(8) and not read.replied_after(9)
    assert read.superseded(6, "reminder") and not read.superseded(7, "reminder")
    assert read.said("intro") == 2 and read.visits == 3 and read.flagged and read.contacted
    assert read.verdicts_after("steps", 7) == {"measurement.recorded"}
    assert not read.crisis_after(0) and read.retrievals() == {}


def test_a_version_0_memory_upcasts_to_the_document_the_same_events_fold_to() -> None:
    stream = Stream(11)
    for _ in range(500):
        stream.step()
    folded = memory.fold(stream.events)
    assert folded["messages"] and folded["questions"] and folded["timers"]
    upcast = memory.upcast(_as_version_0(folded))
    assert upcast == folded and upcast is not None and upcast["v"] == memory.VERSION


def test_an_event_on_a_version_0_memory_stores_it_as_todays_version() -> None:
    stream = Stream(12)
    for _ in range(300):
        stream.step()
    before, after = stream.events[:-20], stream.events[-20:]
    doc: memory.MemoryDoc | dict[str, Any] = _as_version_0(memory.fold(before))
    for ev in after:
        doc = memory.apply(doc, ev)
    assert doc == memory.fold(stream.events)


def test_a_row_with_a_version_0_memory_reads_upcast_and_is_rewritten_by_its_next_event() -> None:
    at = START - timedelta(minutes=1)
    row = participants.apply(None, Event(1, new_id(), "p", 1, enrolled(), {}, None, at, at))
    assert row is not None
    legacy = {**row, "memory": V0}
    assert memory.of(legacy) == memory.upcast(V0)
    later = Event(10, new_id(), "p", 10, received(), {}, None, START, START)
    moved = participants.apply(legacy, later)
    assert moved is not None and moved["memory"]["v"] == memory.VERSION
    assert moved["memory"]["reply"] == 10 and moved["memory"]["received"][-1]["version"] == 10


def test_a_memory_of_an_unknown_version_is_read_as_none() -> None:
    assert memory.upcast({**memory.empty(), "v": memory.VERSION + 1}) is None
    assert memory.upcast({**V0, "format": 2}) is None


def test_replay_reads_a_stored_version_0_memory_as_its_upcast_and_finds_a_real_change(
    store: EventStore,
) -> None:
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first, received(), received()])
    folded = memory.fold(store.load(stream))  # fields in their declared order, as stored

    def store_memory(value: dict[str, Any]) -> None:
        with store.transaction() as tx:
            tx.conn.execute(
                update(participants_table)
                .where(participants_table.c.participant_id == first.participant_id)
                .values(memory=value)
            )

    store_memory(_as_version_0(folded))
    same = replay.check(store)
    assert same.clean, [d.describe() for d in same.differences]  # stored by the old version

    store_memory({**_as_version_0(folded), "visits": folded["visits"] + 1})
    report = replay.check(store)
    assert [(d.key, sorted(d.columns or {})) for d in report.differences] == [
        (first.participant_id, ["memory"])
    ]


def test_a_version_1_memory_reads_its_one_alert_text_time_as_the_least_severitys() -> None:
    v1 = {k: v for k, v in memory.empty().items() if k != "texted"}
    at = "2026-01-05T09:50:00+00:00"
    read = memory.upcast({**v1, "v": 1, "texted_at": at})
    assert read is not None and read["v"] == memory.VERSION
    assert memory.Memory(read).texted_by_severity() == {"info": datetime.fromisoformat(at)}
    assert memory.upcast({**v1, "v": 1})["texted"] == {}  # type: ignore[index]  # v1 is known
