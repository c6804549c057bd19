"""evaluations.csv: one row per rating of a bot turn, with a `check_<key>` column per item of
the interventions' checklists and the codebook describing each; pseudonymised, the study code
stands for the participant, the message id is left out and the comment is redacted."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from bot.interventions.interpreter.applied import INTERVENTIONS
from bot.reporting.codebook import documents
from bot.reporting.export import export, study_code
from bot.services import ratings
from bot.store.event_store import EventStore
from bot.store.event_types.messages import MessageQueued
from bot.store.events import participant_stream
from tests.factories import enrolled

CHECKLIST = ("on_manual", "empathic", "unsafe_advice")


def _rated(store: EventStore) -> str:
    person = enrolled(name="Ada Lovelace")
    pid = person.participant_id
    stream = participant_stream(pid)
    store.append(stream, [person], expected_version=0)
    store.append(
        stream,
        [
            MessageQueued(outbox_id="turn-1", to_address=person.phone, channel="sms", body="Hi"),
            MessageQueued(outbox_id="turn-2", to_address=person.phone, channel="sms", body="Tip"),
        ],
    )
    for message, score, checks, comment in (
        ("turn-1", 5, {"on_manual": True, "empathic": True}, "lovely, Ada will like it"),
        ("turn-2", 2, {"unsafe_advice": True}, ""),
    ):
        ratings.rate(
            store, pid, message, score=str(score), checks=checks, checklist=CHECKLIST,
            comment=comment, by="staff:rev@example.org", intervention="demo",
        )  # fmt: skip
    return pid


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_each_rating_is_a_row_with_its_checklist_columns_described_in_the_codebook(
    store: EventStore, tmp_path: Path
) -> None:
    pid = _rated(store)
    books = documents(INTERVENTIONS, ["demo"])

    counts = export(store, tmp_path, "csv", documents=books)

    rows = _read(tmp_path / "evaluations.csv")
    assert counts.evaluations == 2
    picked = [
        {k: r[k] for k in ("participant_id", "message_id", "rater", "score", "comment")}
        | {k: r[f"check_{k}"] for k in CHECKLIST}
        for r in rows
    ]
    assert picked == [
        {"participant_id": pid, "message_id": "turn-1", "rater": "staff:rev@example.org"}
        | {"score": "5", "comment": "lovely, Ada will like it"}
        | {"on_manual": "1", "empathic": "1", "unsafe_advice": "0"},
        {"participant_id": pid, "message_id": "turn-2", "rater": "staff:rev@example.org"}
        | {"score": "2", "comment": ""}
        | {"on_manual": "0", "empathic": "0", "unsafe_advice": "1"},
    ]
    book = json.loads((tmp_path / "codebook.json").read_text(encoding="utf-8"))
    described = {c["name"]: c for c in book["files"]["evaluations.csv"]}
    assert list(described) == list(rows[0])
    assert "1 (poor) to 5 (excellent)" in described["score"]["description"]
    items = [v for v in book["variables"] if v["kind"] == "checklist item"]
    assert [(v["name"], v["appears_in"]) for v in items] == [
        (f"evaluations.{k}", f"evaluations.csv check_{k}") for k in CHECKLIST
    ]
    assert items[0]["file"].endswith("intervention.yaml") and items[0]["line"]
    assert "evaluations.csv" in (tmp_path / "codebook.md").read_text(encoding="utf-8")


def test_a_pseudonymised_export_codes_the_participant_and_redacts_the_comment(
    store: EventStore, tmp_path: Path
) -> None:
    pid = _rated(store)

    export(store, tmp_path, "csv", documents=documents(INTERVENTIONS, ["demo"]), pseudonymise=True)

    rows = _read(tmp_path / "evaluations.csv")
    assert [r["study_code"] for r in rows] == [study_code(pid)] * 2
    assert "participant_id" not in rows[0] and "message_id" not in rows[0]
    assert rows[0]["comment"] == "lovely, [name] will like it"
