"""forms.csv in `tandem export`: one row per participant × form field with a value, its type,
domain, when it was set and the message it came from; read back with the csv module, every
column has the type the codebook gives it (a value: its field's type)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from bot.core.clock import FakeClock
from bot.reporting.codebook import documents
from bot.reporting.export import export, study_code
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from tests.cli.test_export_results import _fits, _read, _store
from tests.interventions.test_forms import extraction, proposal
from tests.modules.step_harness import Run

SHIPPED = Path(__file__).resolve().parents[2] / "interventions"
OT = "5b0e3a1c-0000-4c5d-8e9f-0a1b2c3d4e5f"
INTAKE = "6c1f4b2d-1111-4c5d-8e9f-0a1b2c3d4e5f"


def _ot_run() -> Run:
    run = Run(SHIPPED / "ot-mentor")
    run.llm.says("step:intake:reply", "Tell me more.")
    run.start()
    run.llm.results["form:situation"] = extraction(
        {"patient_age": 72, "diagnosis": "stroke", "interventions_tried": ["sock aid"]}
    )
    run.say("She is 72, a stroke; I tried a sock aid.")
    run.llm.results["form:situation"] = extraction({"patient_age": 73, "setting": "hospital"})
    run.say("Sorry, 73, on a ward.")
    return run


def _intake_run() -> Run:
    run = Run(SHIPPED / "health-intake")
    run.llm.says("step:interview:reply", "Next?")
    run.llm.judges("red_flag", reason="fine", present=False)
    run.start()
    run.llm.results["form:intake"] = extraction(
        {"shift_work": True, "sleep_hours": 5.5}, new_fields=[proposal("shift_work")]
    )
    run.say("Night shifts; about five and a half hours of sleep.")
    return run


def _exported(store: EventStore, clock: FakeClock, tmp_path: Path, **options: Any) -> Path:
    _store(store, clock, _ot_run(), OT, "+447700900321")
    _store(store, clock, _intake_run(), INTAKE, "+447700900654")
    out = tmp_path / "out"
    book = documents(SHIPPED, ["ot-mentor", "health-intake"])
    export(store, out, "csv", documents=book, **options)
    return out


def test_forms_has_one_row_per_field_with_its_latest_value_and_the_message_it_came_from(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)

    rows = [r for r in _read(out / "forms.csv") if r["participant_id"] == OT]

    assert [(r["field"], r["value"], r["times_set"]) for r in rows] == [
        ("patient_age", "73", "2"),
        ("diagnosis", "stroke", "1"),
        ("interventions_tried", '["sock aid"]', "1"),
        ("setting", "hospital", "1"),
    ]
    age = rows[0]
    assert (age["form"], age["type"], age["critical"], age["added"]) == (
        "situation",
        "int",
        "true",
        "false",
    )
    received = [e for e in store.load(participant_stream(OT)) if e.event_type == "message.received"]
    assert age["message_seq"] == str(received[-1].seq)
    assert len(age["message_id"]) == 36  # the message.received event's id (a uuid)
    added = [r for r in _read(out / "forms.csv") if r["field"] == "shift_work"]
    assert [(r["added"], r["type"], r["domain"], r["value"]) for r in added] == [
        ("true", "bool", "lifestyle", "true")
    ]


def test_every_column_of_forms_has_the_type_the_codebook_gives(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path)
    book = json.loads((out / "codebook.json").read_text())
    variables = {(v["intervention"], v["name"]): v for v in book["variables"]}
    columns = book["files"]["forms.csv"]
    with (out / "forms.csv").open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))

    assert rows and list(rows[0]) == [c["name"] for c in columns]
    checked = 0
    for row in rows:
        for column in columns:
            kind, options = column["type"], column.get("options")
            cell = row[column["name"]]
            if kind == "variable":
                declared = variables.get(
                    (row["intervention"], f"forms.{row['form']}.answers.{row['field']}")
                )
                assert declared is not None or row["added"] == "true", row
                kind = declared["type"] if declared else row["type"]
                options = declared["options"] if declared else None
                assert kind == row["type"]
            if kind == "list":
                assert all(isinstance(item, str) for item in json.loads(cell))
            else:
                assert _fits(cell, kind, options), (column, row)
            checked += 1
    assert checked > 50
    age = variables[("ot-mentor", "forms.situation.answers.patient_age")]
    assert (age["type"], age["min"], age["max"], age["kind"]) == ("int", 0, 120, "form")
    assert age["file"] == "ot-mentor/forms/situation.yaml" and "critical" in age["description"]
    assert (
        "| `forms.situation.answers.marital_status` | form | choice |"
        in (out / "codebook.md").read_text()
    )


def test_a_pseudonymised_export_drops_text_values_with_free_text(
    store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    out = _exported(store, clock, tmp_path, pseudonymise=True, free_text="drop")

    rows = {r["field"]: r for r in _read(out / "forms.csv")}

    assert rows["diagnosis"]["value"] == "" and rows["patient_age"]["value"] == "73"
    assert rows["patient_age"]["study_code"] == study_code(OT)
    assert "participant_id" not in rows["patient_age"]
