"""Blinding: in a `blinded: true` study a researcher sees no arm (nor the intervention that
would name it) on the console's pages, an admin sees the arm's code, a supervisor never sees an
arm, and an admin's unblinding of one participant (console button or `tandem study unblind`)
is recorded with its reason and shows that participant's arm."""

from __future__ import annotations

import csv
import html
import io

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.studies.blinding import arm_code
from bot.studies.catalogue import StudyCatalogue
from bot.studies.seed import study_seed
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import PASSWORD, get, post, sign_in, staff_member
from tests.web.researcher import AUTH, BASE
from tests.web.study_apps import BASELINE, BLIND, PILOT, study_app, study_catalogue

RUNS = {"coach": "habit-coach", "control": "walk-control"}


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


@pytest.fixture
def app(database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue) -> Flask:
    return study_app(database_url, store, clock, studies)


def staff(app: Flask, role: str) -> FlaskClient:
    services = app.extensions["tandem"]
    staff_member(services, f"{role}@example.org", role)
    client = app.test_client()
    assert sign_in(client, f"{role}@example.org", PASSWORD).status_code == 302
    return client


def enrolled(app: Flask, study: str, phone: str = "+14155552671") -> tuple[str, str]:
    body = {"phone_number": phone, "study": study, "baseline": BASELINE}
    answer = app.test_client().post(BASE, json=body, headers=AUTH)
    assert answer.status_code == 201
    pid = answer.get_json()["result"]["id"]
    row = app.extensions["tandem"].store.projection_row("participants", pid)
    return pid, row["arm"]


def page(client: FlaskClient, path: str) -> str:
    return html.unescape(get(client, path).get_data(as_text=True))


def names_the_arm(text: str, arm: str) -> str:
    """The text around the first place `text` names `arm` (or its intervention); "" if none."""
    for needle in (f">{arm}<", RUNS[arm], f'"{arm}"'):
        at = text.find(needle)
        if at >= 0:
            return text[max(0, at - 120) : at + 60]
    return ""


def test_a_researcher_sees_no_arm_of_a_blinded_study_on_any_page(app: Flask) -> None:
    pid, arm = enrolled(app, BLIND)
    researcher = staff(app, "researcher")

    shown = [
        page(researcher, f"/console/participants/{pid}"),
        page(researcher, "/console/participants"),
    ]

    assert 'id="arm">(blinded)<' in shown[0]
    assert [names_the_arm(text, arm) for text in shown] == ["", ""]
    assert 'id="unblind"' not in shown[0]


def test_an_admin_sees_the_arm_code_and_a_supervisor_no_arm(app: Flask) -> None:
    pid, arm = enrolled(app, BLIND)
    code = arm_code(study_seed(BLIND, TEST_MASTER_KEY), arm)

    shown = page(staff(app, "admin"), f"/console/participants/{pid}")

    assert f'id="arm">{code}<' in shown and not names_the_arm(shown, arm)
    assert 'id="unblind"' in shown


def test_an_unblinded_study_shows_its_arm_to_a_researcher(app: Flask) -> None:
    pid, arm = enrolled(app, PILOT)

    shown = page(staff(app, "researcher"), f"/console/participants/{pid}")

    assert f'id="arm">{arm}<' in shown and RUNS[arm] in shown


def test_the_admins_unblind_button_records_the_reason_and_shows_the_arm(
    app: Flask, store: EventStore
) -> None:
    pid, arm = enrolled(app, BLIND)
    admin = staff(app, "admin")

    refused = post(admin, f"/console/participants/{pid}/unblind", {"reason": " "})
    done = post(admin, f"/console/participants/{pid}/unblind", {"reason": "serious adverse event"})
    after = page(admin, f"/console/participants/{pid}")

    assert refused.status_code == 400
    assert done.status_code == 302
    assert f'id="arm">{arm}<' in after and "unblinded" in after
    (event,) = [
        e for e in store.load(participant_stream(pid)) if e.event_type == "participant.unblinded"
    ]
    assert (event.data.reason, event.data.by) == (
        "serious adverse event",
        "staff:admin@example.org",
    )
    researcher_view = page(staff(app, "researcher"), f"/console/participants/{pid}")
    assert not names_the_arm(researcher_view, arm)


def test_a_researcher_cannot_unblind(app: Flask, store: EventStore) -> None:
    pid, _ = enrolled(app, BLIND)

    answer = post(staff(app, "researcher"), f"/console/participants/{pid}/unblind", {"reason": "x"})

    assert answer.status_code == 403
    assert all(e.event_type != "participant.unblinded" for e in store.load(participant_stream(pid)))


def test_tandem_study_unblind_prints_the_arm_and_records_it(
    app: Flask,
    store: EventStore,
    database_url: str,
    studies: StudyCatalogue,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("bot.studies.catalogue.STUDIES", studies.root)
    blind, arm = enrolled(app, BLIND)
    open_pid, _ = enrolled(app, PILOT, "+14155552672")
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    run = CliRunner().invoke

    refused = run(cli, ["study", "unblind", PILOT, open_pid, "--reason", "safety"], env=env)
    done = run(cli, ["study", "unblind", BLIND, "+1 415 555 2671", "--reason", "safety"], env=env)

    assert refused.exit_code == 1 and "not blinded" in refused.output
    assert done.exit_code == 0, done.output
    assert done.output.strip().endswith(f"arm {arm} (unblinding recorded)")
    kinds = [e.event_type for e in store.load(participant_stream(blind))]
    assert kinds.count("participant.unblinded") == 1
    assert "participant.unblinded" not in [
        e.event_type for e in store.load(participant_stream(open_pid))
    ]


def test_the_study_overview_counts_each_arm_per_stratum_and_the_balance(
    app: Flask, store: EventStore
) -> None:
    arms = [enrolled(app, PILOT, f"+1415555{n:04d}")[1] for n in range(2700, 2706)]
    enrolled(app, BLIND, "+14155552710")
    researcher, admin = staff(app, "researcher"), staff(app, "admin")

    shown = page(researcher, "/console/study")
    pilot = shown.split('id="study-walk-pilot"')[1].split("</section>")[0]
    blind = shown.split('id="study-walk-blind"')[1].split("</section>")[0]

    coach, control = arms.count("coach"), arms.count("control")
    assert "<th>coach</th><th>control</th>" in pilot
    assert f"<td>activity_level=low</td><td>{coach}</td><td>{control}</td><td>6</td>" in pilot
    assert f"<td>{float(abs(coach - control))}</td>" in pilot
    assert "<th>coach</th>" not in blind and "not shown to your role" in blind
    admin_view = page(admin, "/console/study").split('id="study-walk-blind"')[1]
    assert "<th>X" in admin_view.split("</section>")[0]


def test_a_researcher_gets_the_files_without_arms_and_not_those_made_of_arms(
    app: Flask,
) -> None:
    pid, arm = enrolled(app, BLIND)
    researcher, admin = staff(app, "researcher"), staff(app, "admin")

    refused = [
        get(researcher, f"/console/export/{n}.csv").status_code for n in ("allocations", "events")
    ]
    participants = get(researcher, "/console/export/participants.csv")
    allowed = get(researcher, "/console/export/messages.csv")
    by_admin = get(admin, "/console/export/participants.csv")

    assert refused == [403, 403]
    assert allowed.status_code == 200
    assert participants.status_code == 200
    rows = list(csv.DictReader(io.StringIO(participants.get_data(as_text=True))))
    assert "arm" not in rows[0] and rows[0]["study"] == BLIND and rows[0]["intervention"] == ""
    assert arm not in rows[0].values() and RUNS[arm] not in participants.get_data(as_text=True)
    code = arm_code(study_seed(BLIND, TEST_MASTER_KEY), arm)
    (row,) = csv.DictReader(io.StringIO(by_admin.get_data(as_text=True)))
    assert (row["participant_id"], row["arm"]) == (pid, code)
