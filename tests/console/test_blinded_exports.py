"""Arm codes in exports (docs/studies.md, "Blinding"): of a blinded study, admins and
statisticians export each arm as its code and never its name, in participants, allocations
(its per-arm probabilities and a stage-2 sequence too) and events; `tandem export` (the
operator) writes codes unless `--unblinded`, and records which. A statistician sees the study
page and exports, and cannot open a participant, change one or unblind."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.services import broadcasts
from bot.store.event_store import EventStore
from bot.store.event_types.exports import ExportWritten
from bot.store.events import SYSTEM_STREAM
from bot.studies.blinding import arm_code
from bot.studies.catalogue import StudyCatalogue
from bot.studies.seed import study_seed
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import PASSWORD, get, post, sign_in, staff_member
from tests.web.researcher import AUTH, BASE
from tests.web.study_apps import BASELINE, BLIND, PILOT, study_app, study_catalogue

ARMS = ("coach", "control")
RUNS = ("habit-coach", "walk-control")


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


@pytest.fixture
def app(database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue) -> Flask:
    return study_app(database_url, store, clock, studies)


def staff(app: Flask, role: str) -> FlaskClient:
    staff_member(app.extensions["tandem"], f"{role}@example.org", role)
    client = app.test_client()
    assert sign_in(client, f"{role}@example.org", PASSWORD).status_code == 302
    return client


def enroll(app: Flask, study: str, phone: str) -> tuple[str, str]:
    body = {"phone_number": phone, "study": study, "baseline": BASELINE}
    answer = app.test_client().post(BASE, json=body, headers=AUTH)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    pid = answer.get_json()["result"]["id"]
    row = app.extensions["tandem"].store.projection_row("participants", pid)
    return pid, row["arm"]


def rows(response: object) -> list[dict[str, str]]:
    assert getattr(response, "status_code", None) == 200
    text = response.get_data(as_text=True)  # type: ignore[attr-defined]
    return list(csv.DictReader(io.StringIO(text)))


def code(arm: str) -> str:
    return arm_code(study_seed(BLIND, TEST_MASTER_KEY), arm)


@pytest.mark.parametrize("role", ["admin", "statistician"])
def test_admins_and_statisticians_export_a_blinded_arm_as_its_code_only(
    app: Flask, role: str
) -> None:
    blind = dict(enroll(app, BLIND, f"+1415555{n:04d}") for n in range(2800, 2804))
    open_pid, open_arm = enroll(app, PILOT, "+14155552899")
    broadcast = {
        "message": "Walk today!",
        "filter": {"study": BLIND, "arm": "coach"},
        "send_at": {"mode": "local", "time": "18:00"},
    }
    # Made by the operator (`tandem broadcast`): the API, a researcher, may not target an arm
    # of a blinded study (tests/console/test_blinded_broadcasts.py).
    services = app.extensions["tandem"]
    broadcasts.create(
        services.store,
        app.extensions["tandem.interventions"],
        broadcast,
        actor="operator",
        now=services.clock.now(),
    )
    client = staff(app, role)

    people = {r["participant_id"]: r for r in rows(get(client, "/console/export/participants.csv"))}
    made = rows(get(client, "/console/export/allocations.csv"))
    events = rows(get(client, "/console/export/events.csv"))

    for pid, arm in blind.items():
        assert people[pid]["arm"] == code(arm) and people[pid]["intervention"] == ""
        (allocation,) = [r for r in made if r["participant_id"] == pid]
        assert allocation["arm"] == code(arm)
        assert allocation[f"p_{code(arm)}"] == "0.5" and allocation["p_coach"] == ""
        (allocated,) = [
            json.loads(e["data"])
            for e in events
            if e["type"] == "participant.allocated" and pid in e["stream_id"]
        ]
        assert allocated["arm"] == code(arm)
        assert set(allocated["probabilities"]) == {code(a) for a in ARMS}
        blinded_text = json.dumps([people[pid], allocation, allocated])
        assert not any(f'"{name}"' in blinded_text for name in (*ARMS, *RUNS)), blinded_text
    (created,) = [json.loads(e["data"]) for e in events if e["type"] == "broadcast.created"]
    assert created["filter"]["arm"] == code("coach")  # its recipients would name the arm
    assert people[open_pid]["arm"] == open_arm  # a study that is not blinded: by name
    (opened,) = [r for r in made if r["participant_id"] == open_pid]
    assert opened["arm"] == open_arm and opened[f"p_{open_arm}"] == "0.5"


def test_a_statistician_sees_the_balance_and_cannot_open_change_or_unblind(app: Flask) -> None:
    pid, _ = enroll(app, BLIND, "+14155552850")
    statistician = staff(app, "statistician")

    study = get(statistician, "/console/study")
    assert study.status_code == 200
    blind = study.get_data(as_text=True).split('id="study-walk-blind"')[1].split("</section>")[0]
    assert "<th>X" in blind and "<th>coach</th>" not in blind

    assert get(statistician, f"/console/participants/{pid}").status_code == 403
    assert get(statistician, "/console/participants").status_code == 403
    assert get(statistician, "/console/enroll").status_code == 403
    unblind = post(statistician, f"/console/participants/{pid}/unblind", {"reason": "curious"})
    assert unblind.status_code == 403
    withdraw = post(statistician, f"/console/participants/{pid}/withdraw", {"reason": "x"})
    assert withdraw.status_code == 403
    store = app.extensions["tandem"].store
    assert "participant.unblinded" not in [e.event_type for e in store.read_all()]
    assert "participant.withdrawn" not in [e.event_type for e in store.read_all()]


def test_tandem_export_writes_codes_unless_unblinded_and_records_which(
    app: Flask,
    store: EventStore,
    database_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pid, arm = enroll(app, BLIND, "+14155552860")
    monkeypatch.setattr("bot.studies.catalogue.STUDIES", studies_root(app))
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}

    coded = CliRunner().invoke(cli, ["export", "--out", str(tmp_path / "c")], env=env)
    named = CliRunner().invoke(
        cli, ["export", "--out", str(tmp_path / "n"), "--unblinded"], env=env
    )

    assert coded.exit_code == 0, coded.output
    assert named.exit_code == 0, named.output
    with open(tmp_path / "c" / "participants.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["participant_id"] == pid]
    assert row["arm"] == code(arm)
    assert f",{arm}," not in (tmp_path / "c" / "allocations.csv").read_text()
    with open(tmp_path / "n" / "participants.csv", newline="") as f:
        (row,) = [r for r in csv.DictReader(f) if r["participant_id"] == pid]
    assert row["arm"] == arm
    written = [e.data for e in store.load(SYSTEM_STREAM) if isinstance(e.data, ExportWritten)]
    assert [w.arms for w in written][-2:] == ["codes", "names"]


def studies_root(app: Flask) -> Path:
    """The studies folder the app enrolls from (walk-pilot and walk-blind)."""
    return Path(app.extensions["tandem.studies"].root)
