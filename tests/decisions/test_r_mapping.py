"""docs/decisions.md's R analysis (MRTAnalysis::wcls / emee) reads decisions.csv as
`tandem export` writes it: every column its R code and its argument table name is a column of
the file (the example's `walk_nudge`, `nudge` and `hour` read as walk-mrt's `walk_prompt`,
`suggest` and `stress`), `study_code` stands for `participant_id` when pseudonymised, and the
values its code tests for (`available`, `outcome_status`, `option`) are the ones written."""

from __future__ import annotations

import csv
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli.main import cli
from bot.store.event_store import EventStore
from bot.store.event_types.decisions import DecisionMade, DecisionOutcome
from bot.store.events import participant_stream
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled

DOC = Path(__file__).resolve().parents[2] / "docs" / "decisions.md"
AS_WALK_MRT = {"walk_nudge": "walk_prompt", "nudge": "suggest", "hour": "stress"}
T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
P = {"nothing": 0.4, "suggest": 0.6}


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## The same analysis in R")
    return text[start : text.index("\n## ", start + 1)]


def r_code() -> str:
    (code,) = re.findall(r"```r\n(.*?)```", section(), re.S)
    return code


def as_walk_mrt(name: str) -> str:
    for old, new in AS_WALK_MRT.items():
        name = re.sub(rf"(?<![a-z]){old}(?![a-z])", new, name)
    return name


def named_columns() -> set[str]:
    """The columns the R code reads from d (`d$x` it did not make itself) and the table's
    right-hand column names (`p_<option>`, `mod_<name>` as the example's option and moderator)."""
    code = r_code()
    made = set(re.findall(r"d\$(\w+)\s*<-", code))
    read = set(re.findall(r"d\$(\w+)", code)) - made
    read |= set(re.findall(r"~\s*(mod_\w+)", code))
    read |= {arg for arg in re.findall(r'(?:id|outcome) = "(\w+)"', code)}
    table = [line.split("|")[2] for line in section().splitlines() if line.startswith("| `")]
    for cell in table:
        read |= set(re.findall(r"`([a-z_<>]+)`", cell))
    read = {c.replace("<option>", "nudge").replace("<name>", "hour") for c in read}
    return {as_walk_mrt(c) for c in read} - {"study_code"}


def header(database_url: str, out: Path, *flags: str) -> tuple[list[str], list[dict[str, str]]]:
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    args = ["export", "--out", str(out), "--no-progress", *flags]
    result = CliRunner().invoke(cli, args, env=env)
    assert result.exit_code == 0, result.output
    with (out / "decisions.csv").open(encoding="utf-8", newline="") as file:
        reader = csv.DictReader(file)
        return list(reader.fieldnames or []), list(reader)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_every_column_the_r_analysis_names_is_a_column_of_decisions_csv(
    store: EventStore, database_url: str, tmp_path: Path
) -> None:
    person = enrolled(timezone="UTC", intervention="walk-mrt")
    pid = person.participant_id
    made = [
        DecisionMade(
            intervention="walk-mrt",
            decision="walk_prompt",
            index=i,
            scheduled_for=T0 + timedelta(hours=3 * i),
            available=True,
            probabilities=P,
            options=list(P),
            option=option,
            u=u,
            moderators={"stress": 4},
        )  # fmt: skip
        for i, (option, u) in enumerate((("nothing", 0.2), ("suggest", 0.7)))
    ]
    away = DecisionMade(
        intervention="walk-mrt", decision="walk_prompt", index=2,
        scheduled_for=T0 + timedelta(hours=6), available=False, unavailable_reason="quiet_hours",
    )  # fmt: skip
    outcomes = [
        DecisionOutcome(decision="walk_prompt", index=0, status="observed", value="Yes"),
        DecisionOutcome(decision="walk_prompt", index=1, status="missing"),
    ]
    store.append(participant_stream(pid), [person, *made, away, *outcomes])

    wanted = named_columns()
    assert wanted >= {"participant_id", "outcome_value", "p_suggest", "mod_stress", "available"}
    assert wanted >= {"option", "outcome_status", "decision", "index"}
    columns, rows = header(database_url, tmp_path / "plain")
    assert wanted <= set(columns), wanted - set(columns)
    # The values the R code tests for are the ones written.
    assert [r["available"] for r in rows] == ["true", "true", "false"]
    assert [r["outcome_status"] for r in rows] == ["observed", "missing", ""]
    assert [r["option"] for r in rows] == ["nothing", "suggest", ""]
    assert float(rows[0]["outcome_value"]) == 1.0 and rows[1]["outcome_value"] == ""
    assert float(rows[1]["p_suggest"]) == 0.6

    pseudonymised, _ = header(database_url, tmp_path / "codes", "--pseudonymise")
    assert "study_code" in pseudonymised and "participant_id" not in pseudonymised
    assert wanted - {"participant_id"} <= set(pseudonymised)
    assert "`participant_id` (`study_code` when pseudonymised)" in section()
