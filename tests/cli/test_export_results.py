"""`tandem export`'s analysis files: results.csv (one row per measurement occasion), retrievals.csv
(one row per document retrieved) and the codebook; read back with the csv module, every column
has the type the codebook gives it."""

from __future__ import annotations

import csv
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.conversation.timer_turns import handle_fired
from bot.conversation.working import pending_timers
from bot.core.clock import FakeClock
from bot.reporting.codebook import documents
from bot.reporting.export import export, study_code
from bot.store.event_store import EventStore
from bot.store.event_types.timers import TimerFired
from bot.store.events import participant_stream
from bot.timers.schedules import next_occurrence
from tests.modules.step_harness import FIXTURES, Run, in_explore


def _until(run: Run, **delta: float) -> None:
    """Move the clock on, firing every timer due on the way at its time, as the scheduler
    does (`timer.fired`, what the timer decides, and a daily timer's next occurrence)."""
    until = run.now + timedelta(**delta)
    while True:
        due = sorted(
            (t for t in pending_timers(run.events) if t["due_at"] <= until),
            key=lambda t: t["due_at"],
        )
        if not due:
            break
        timer = due[0]
        run.now = max(run.now, timer["due_at"])
        decided = handle_fired(run.row, {**timer, "status": "fired"}, run.events, run.now)
        run.record([TimerFired(timer_id=timer["timer_id"]), *decided])
        following = next_occurrence(timer, run.row, run.now)
        if following is not None:
            run.record([following])
    run.now = until


def _day_of_answers() -> Run:
    """The good fixture's daily mood question at 20:00: answered (7) three minutes later;
    missed the next day; answered wrongly twice the day after (rejected); then asked again and
    still open."""
    run = in_explore(Run())
    run.llm.answers("question:mood", None)
    run.llm.says("step:explore:reply", "Let's keep going.")
    _until(run, hours=11, minutes=3)  # 20:03 on day 1
    run.say("7")
    _until(run, days=1, hours=2)  # 22:03 on day 2: the question was missed
    _until(run, hours=21, minutes=58)  # 20:01 on day 3
    run.say("what do you mean?")
    run.say("no idea")
    _until(run, days=1)  # 20:01 on day 4
    return run


def _library_run() -> Run:
    run = Run("library")
    run.start()
    run.say("a stroke at home")
    run.say("zebra")
    return run


def _store(store: EventStore, clock: FakeClock, run: Run, participant_id: str, phone: str) -> None:
    """The run's events, as recorded, in the stream of `participant_id` (with `phone`)."""
    for ev in run.events:
        clock.set(ev.occurred_at)
        data = ev.data
        if ev.data.event_type == "participant.enrolled":
            data = data.model_copy(update={"participant_id": participant_id, "phone": phone})
        store.append(participant_stream(participant_id), [data])


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def _fits(text: str, kind: str, options: list[str] | dict[str, str] | None = None) -> bool:
    """Whether a CSV cell is a value of the codebook type (blank: no value)."""
    if text == "":
        return True
    if kind == "int":
        return str(int(text)) == text
    if kind == "number":
        float(text)
        return True
    if kind == "datetime":
        return datetime.fromisoformat(text).tzinfo is not None
    if kind == "naive datetime":  # one format in every row: YYYY-MM-DDTHH:MM:SS
        return datetime.fromisoformat(text).tzinfo is None and len(text) == 19
    if kind == "choice":
        return text in (options or [])
    if kind == "bool":
        return text in ("true", "false")
    return kind == "text"


PARTICIPANT = "0c7b7c5e-6f3a-4b0e-9a52-1f8f1a3c9d10"
LIBRARY_PARTICIPANT = "9d3e1a2b-1111-4c5d-8e9f-0a1b2c3d4e5f"


def _exported(store: EventStore, clock: FakeClock, tmp_path: Path, **options: Any) -> Path:
    _store(store, clock, _day_of_answers(), PARTICIPANT, "+447700900123")
    _store(store, clock, _library_run(), LIBRARY_PARTICIPANT, "+447700900456")
    out = tmp_path / "out"
    export(store, out, "csv", documents=documents(FIXTURES, ["good", "library"]), **options)
    return out


def test_results_has_one_row_per_occasion_with_its_status(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)

    rows = _read(out / "results.csv")

    assert [(r["question"], r["status"], r["value"]) for r in rows] == [
        ("mood", "answered", "7"),
        ("mood", "missed", ""),
        ("mood", "rejected", ""),
        ("mood", "pending", ""),
    ]
    first = rows[0]
    assert first["participant_id"] == PARTICIPANT and first["intervention"] == "good"
    assert first["scheduled_local"] == "2026-03-02T20:00:00+00:00"
    assert first["answered_local"] == "2026-03-02T20:03:00+00:00"
    assert (first["latency_seconds"], first["method"], rows[2]["attempts"]) == (
        "180.0",
        "parsed",
        "2",
    )


def test_every_column_of_results_and_retrievals_has_the_type_the_codebook_gives(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)
    book = json.loads((out / "codebook.json").read_text())
    variables = {(v["intervention"], v["name"]): v for v in book["variables"]}

    checked = 0
    for file in ("results.csv", "retrievals.csv"):
        columns = book["files"][file]
        rows = _read(out / file)
        assert rows and list(rows[0]) == [c["name"] for c in columns]
        for row in rows:
            for column in columns:
                kind, options = column["type"], column.get("options")
                if kind == "variable":  # results.csv value: its question's type
                    variable = variables[(row["intervention"], f"measurements.{row['question']}")]
                    kind, options = variable["type"], variable["options"]
                assert _fits(row[column["name"]], kind, options), (file, column, row)
                checked += 1
    assert checked > 50


def test_retrievals_has_one_row_per_document_and_one_for_no_match(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)

    rows = [r for r in _read(out / "retrievals.csv") if r["name"] == "scenarios"]

    assert [(r["rank"], r["doc_id"], r["title"]) for r in rows] == [
        ("1", "s-stroke", "Stroke rehabilitation at home"),
        ("2", "s-hip", "Hip replacement and dressing"),
    ]
    assert rows[0]["query"] == "PARTICIPANT: a stroke at home"
    assert (rows[0]["method"], rows[0]["when"], rows[0]["step"]) == ("bm25", "action", "intake")
    tips = [r for r in _read(out / "retrievals.csv") if r["name"] == "tip"]
    assert [(t["query"], t["doc_id"]) for t in tips] == [
        ("PARTICIPANT: a stroke at home", ""),
        ("PARTICIPANT: zebra", ""),
    ]


def test_the_codebook_gives_each_variable_its_type_options_range_and_where_it_is_defined(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)
    book = json.loads((out / "codebook.json").read_text())
    variables = {(v["intervention"], v["name"]): v for v in book["variables"]}

    mood = variables[("good", "measurements.mood")]
    assert (mood["type"], mood["min"], mood["max"]) == ("int", 1, 10)
    assert (mood["file"], mood["line"]) == ("good/questions/mood.md", 3)
    assert mood["appears_in"] == "results.csv value, value_code, value_label (question == mood)"
    kinds = {v["kind"] for v in book["variables"] if v["intervention"] == "good"}
    assert {"question", "judgement", "note"} <= kinds
    ready = variables[("good", "judgements.ready.answer")]
    assert ready["type"] == "choice" and set(ready["options"]) >= {"yes", "no"}
    assert ready["file"] == "good/judgements/ready.md"
    markdown = (out / "codebook.md").read_text()
    assert (
        "| `measurements.mood` | question | int |  | 1–10 | good/questions/mood.md:3 |" in markdown
    )


def test_a_pseudonymised_export_has_study_codes_and_drops_queries_with_free_text(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path, pseudonymise=True, free_text="drop")

    results = _read(out / "results.csv")
    retrievals = _read(out / "retrievals.csv")

    assert {r["study_code"] for r in results} == {study_code(PARTICIPANT)}
    assert "participant_id" not in results[0] and results[0]["value"] == "7"
    assert "query" not in retrievals[0]
    assert {r["study_code"] for r in retrievals} == {study_code(LIBRARY_PARTICIPANT)}
