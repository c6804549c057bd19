"""Every column of instruments.csv, read back with pandas from a real export, is described in
the export's codebook, and every `instruments.<name>.last.*` name the intervention can use is
a codebook variable that says which instruments.csv column holds it — a column that exists,
whose values agree with the variable's declared range."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pandas as pd

from bot.reporting import codebook
from bot.reporting.export import export, intervention_slugs
from bot.runtime.routing import INTERVENTIONS
from tests.scenarios.harness import Harness

AT_RISK = ["2", "2", "1", "2", "1", "2", "1", "1", "1"]


def test_instruments_csv_and_the_result_names_are_all_in_the_codebook(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness(INTERVENTION="phq9-checkin")
    h.enroll()
    for reply in AT_RISK:
        h.text(reply)
    h.until(h.clock.now() + timedelta(days=14, hours=3))  # the second, left unanswered
    books = codebook.documents(INTERVENTIONS, intervention_slugs(h.store))
    export(h.store, tmp_path / "out", "csv", documents=books)

    frame = pd.read_csv(tmp_path / "out" / "instruments.csv")
    book = json.loads((tmp_path / "out" / "codebook.json").read_text(encoding="utf-8"))
    described = {c["name"]: c for c in book["files"]["instruments.csv"]}
    assert list(frame.columns) == list(described)  # each column, in order, and no other
    assert all(described[name]["description"] for name in frame.columns)
    assert sorted(frame["status"]) == ["abandoned", "completed"]
    assert set(frame["status"]) <= set(described["status"]["options"])

    variables = {v["name"]: v for v in book["variables"] if v["kind"] == "instrument"}
    last = {name for name in variables if name.startswith("instruments.phq9.last.")}
    items = {f"instruments.phq9.last.items.i{n}" for n in range(1, 10)}
    assert {"instruments.phq9.last.total", "instruments.phq9.last.band"} | items <= last
    done = frame[frame["status"] == "completed"].iloc[-1]
    answers = json.loads(done["answers"])
    for name in sorted(last):
        variable = variables[name]
        found = re.match(r"instruments\.csv (\w+)(?:\[\"(\w+)\"\])?", variable["appears_in"])
        assert found, variable["appears_in"]
        column, key = found.groups()
        assert column in frame.columns, name
        value = answers[key] if key else done[column]
        if variable["min"] is not None and not pd.isna(value):
            assert variable["min"] <= float(value), name
            assert variable["max"] is None or float(value) <= variable["max"], name
        if variable["options"]:
            assert value in variable["options"], name
    assert done["total"] == 13 and done["band"] == "moderate"
    assert "instruments.phq9.week.mean" in variables
    markdown = (tmp_path / "out" / "codebook.md").read_text(encoding="utf-8")
    assert "instruments.phq9.last.items.i9" in markdown
