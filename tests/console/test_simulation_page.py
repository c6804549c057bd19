"""The Simulation page: the console opened on a `tandem simulate` run's database shows the
report's sections as report.html has them, linked from the menu only when the database holds
a report (`simulation.reported`); a reviewer may not see it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.services.simulation_report import record
from bot.store.events import SYSTEM_STREAM
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import MASTER_KEY, PASSWORD, get, sign_in, staff_member
from tests.sandbox.test_simulate import simulate
from tests.web.conftest import settings_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    report = tmp_path_factory.mktemp("simulated")
    args = ["demo", "--personas", str(ROOT / "personas"), "--participants", "6", "--days", "2"]
    return report, simulate(report, *args)


def test_the_console_on_a_runs_database_shows_its_report(
    run: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    report, found = run
    database = tmp_path / "simulation.db"
    shutil.copy(report / "simulation.db", database)
    settings = settings_for(f"sqlite:///{database}", TANDEM_MASTER_KEY=MASTER_KEY)
    services = build_services(settings, clock=FakeClock())
    try:
        app = create_app(services)
        app.testing = True
        staff_member(services, "res@example.org", "researcher")
        client = app.test_client()
        assert sign_in(client, "res@example.org", PASSWORD).status_code == 302
        answer = get(client, "/console/simulation")
        assert answer.status_code == 200
        page = answer.get_data(as_text=True)
    finally:
        services.close()
    assert 'id="nav-simulation"' in page
    html = (report / "report.html").read_text()
    body = html.split("<body>", 1)[1].rsplit("</body>", 1)[0].strip()
    sections = body.split("<p>The slowest turns")[0].strip()  # the file links timings.html
    assert sections in page  # the same sections, byte for byte
    assert f"{found['summary']['participants']} participants" in page
    for heading in ("Steps", "Burden", "Time to completion", "LLM calls and cost", "Slowest turns"):
        assert f"<h2>{heading}</h2>" in page
    assert "<script" not in body


def test_the_link_shows_only_once_a_report_is_recorded(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    before = get(client, "/console/decisions").get_data(as_text=True)
    assert 'id="nav-simulation"' not in before
    missing = get(client, "/console/simulation")
    assert missing.status_code == 404
    assert "holds no simulation report" in missing.get_data(as_text=True)
    page = "<h1>Simulation of demo: 3 participants, 1 days</h1>\n<p>x &lt; y</p>"
    recorded = record(services.store, {"summary": {"participants": 3}}, {"turns": {}}, page, "t")
    [event] = services.store.load(SYSTEM_STREAM)
    assert event.event_type == "simulation.reported" and event.data == recorded
    after = get(client, "/console/decisions").get_data(as_text=True)
    assert 'id="nav-simulation"' in after
    shown = get(client, "/console/simulation").get_data(as_text=True)
    assert page in shown


def test_a_reviewer_may_not_see_the_simulation(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    record(services.store, {"summary": {}}, {}, "<h1>Simulation</h1>", "t")
    assert get(signed_in("reviewer"), "/console/simulation").status_code == 403
