"""A simulation's report in Chromium: `tandem simulate` runs the demo, the console is served on
the run's own database, and a researcher follows the menu's Simulation link to the report's
sections, the steps coloured by reach."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from playwright.sync_api import Browser, expect

from bot.console import accounts
from bot.core.clock import SystemClock
from bot.runtime.bootstrap import build_services
from bot.web import create_app
from tests.console.test_browser import (  # noqa: F401  (the module's browser fixture)
    PASSWORD,
    _sign_in,
    browser,
)
from tests.fakes.http_server import LocalServer
from tests.sandbox.test_simulate import simulate
from tests.web.conftest import settings_for

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def test_a_researcher_opens_the_simulation_report_from_the_menu(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    args = ["demo", "--personas", str(ROOT / "personas"), "--participants", "6", "--days", "2"]
    found = simulate(tmp_path / "run", *args)
    url = f"sqlite:///{tmp_path / 'run' / 'simulation.db'}"
    services = build_services(settings_for(url, TANDEM_MASTER_KEY="m" * 40), clock=SystemClock())
    server = LocalServer(create_app(services))
    try:
        site = SimpleNamespace(url=server.url.replace("127.0.0.1", "localhost"))
        code = accounts.add(
            services.store, "res@example.org", "researcher", "cli", SystemClock().now()
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _sign_in(page, site, "res@example.org", code)  # type: ignore[arg-type]  # has the url
        page.fill("#password", PASSWORD)
        page.fill("#repeated", PASSWORD)
        page.click("main button[type=submit]")
        page.click("#nav-simulation")
        report = page.locator("#simulation-report")
        expect(report.locator("h1")).to_have_text(
            f"Simulation of demo: {found['summary']['participants']} participants, 2 days"
        )
        expect(report.locator("h2", has_text="Time to completion")).to_be_visible()
        expect(report.locator("h2", has_text="Slowest turns")).to_be_visible()
        welcome = report.locator("tr", has_text="welcome").first
        assert "background" in (welcome.get_attribute("style") or "")
        expect(page.locator("#simulation-recorded")).to_contain_text("tandem simulate")
    finally:
        server.stop()
        services.close()
