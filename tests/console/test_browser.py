"""The console in a real browser: Chromium from the system packages, driven by Playwright.

One study, start to finish, as a researcher and a supervisor would click through it; the bot's
worker and dispatcher are run by the test between steps, and sends go to the fake Twilio.
Set TANDEM_CONSOLE_SCREENSHOTS=docs/console to refresh the README's screenshots.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pyotp
import pytest
import requests
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from bot.channel.dispatcher import Dispatcher
from bot.channel.factory import build_messenger
from bot.console import accounts
from bot.core.clock import SystemClock
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler
from bot.runtime.worker import Worker
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.forms import FormDomainCompleted, FormExtracted, FormValueSet
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.timers.firing import FiringPolicy, fire_due
from bot.web import create_app
from tests.conftest import fresh_database
from tests.factories import enrolled
from tests.fakes.http_server import LocalServer
from tests.fakes.twilio_api import FakeTwilio
from tests.web.conftest import settings_for
from tests.web.twilio_requests import INBOUND, PUBLIC, message, sign

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "a long enough password"
ADA, BO, CY = "+14155552671", "+14155552672", "+14155552673"
CSV = f"phone,name\n{ADA},Ada\nnot-a-number,Nobody\n{BO},Bo\n".encode()
SHOTS = os.environ.get("TANDEM_CONSOLE_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install chromium` (.ci/run does)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


class Study:
    """The app on a loopback server, the fake Twilio, and the bot's worker and dispatcher."""

    def __init__(self, services: Services, server: LocalServer, fake: FakeTwilio) -> None:
        self.services, self.fake = services, fake
        # localhost, not 127.0.0.1: browsers keep Secure cookies on http://localhost only.
        self.url = server.url.replace("127.0.0.1", "localhost")
        self.worker = Worker(services, build_handler(services), "browser-test")
        self.dispatcher = Dispatcher(services, build_messenger(services.settings), "d")

    def run_bot(self) -> None:
        """Fire the timers due by now, then turn and send until nothing is left."""
        while (
            fire_due(self.services.store, self.services.clock.now(), FiringPolicy())
            or self.worker.run_once()
            or self.dispatcher.run_once()
        ):
            pass

    def text_in(self, body: str, phone: str) -> None:
        """The participant texts us: Twilio's webhook, signed, to the running server."""
        form = message(body, sender=phone)
        headers = {"X-Twilio-Signature": sign(PUBLIC + INBOUND, form)}
        answer = requests.post(self.url + INBOUND, data=form, headers=headers, timeout=10)
        assert answer.status_code == 200


@pytest.fixture
def study(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Study]:
    with FakeTwilio() as fake:
        settings = settings_for(
            fresh_database("sqlite", request, tmp_path),
            TANDEM_MASTER_KEY="m" * 40,
            MESSENGER="twilio",
            SUPERVISOR_PHONES="+15005550111",
            TWILIO_API_BASE_URL=fake.url,
            INTERVENTION="demo",
        )
        services = build_services(settings, clock=SystemClock())
        server = LocalServer(create_app(services))
        try:
            yield Study(services, server, fake)
        finally:
            server.stop()
            services.close()


def _shot(page: Page | Locator, name: str) -> None:
    """A screenshot for the docs (a whole page, or one part of it)."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        path = str(Path(SHOTS) / f"{name}.png")
        if isinstance(page, Locator):
            page.screenshot(path=path)
        else:
            page.screenshot(path=path, full_page=True)


def _sign_in(page: Page, study: Study, email: str, secret: str) -> None:
    page.goto(study.url + "/console/login")
    page.fill("#email", email)
    page.fill("#password", secret)
    page.click("main button[type=submit]")


def test_a_researcher_runs_a_study_through_the_console(browser: Browser, study: Study) -> None:
    code = accounts.add(
        study.services.store, "res@example.org", "researcher", "cli", SystemClock().now()
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "res@example.org", code)
    expect(page.locator("h1")).to_have_text("Choose a password")
    page.fill("#password", PASSWORD)
    page.fill("#repeated", PASSWORD)
    page.click("main button[type=submit]")
    expect(page.locator("h1")).to_contain_text("Participants")

    # Enroll from a CSV with one bad row: the dry run shows it and writes nothing.
    page.goto(study.url + "/console/enroll/csv")
    page.set_input_files("#file", {"name": "people.csv", "mimeType": "text/csv", "buffer": CSV})
    page.click("main button[type=submit]")
    expect(page.locator("#dry-run tr.bad")).to_contain_text("not a phone number")
    expect(page.locator("#dry-run tr.ok")).to_have_count(2)
    _shot(page, "enroll-csv-dry-run")
    assert study.services.store.projection_row("participants", "x") is None
    page.click("#confirm")
    expect(page.locator("#done")).to_contain_text("2 participants enrolled")

    # The bot greets them; Ada answers through the signed webhook and the bot moves on.
    study.run_bot()
    study.text_in("Moving more", ADA)
    study.run_bot()
    page.goto(study.url + "/console/participants?sort=name&dir=asc")
    _shot(page, "participants")
    page.click("text=Ada")
    transcript = page.locator("#transcript")
    expect(transcript.locator(".bubble.in")).to_contain_text("Moving more")
    expect(transcript.locator(".bubble.out").first).to_contain_text("Tandem demo")
    expect(transcript).to_contain_text("UTC")
    step = page.locator("#current-step").inner_text()
    assert step not in ("", "—")
    graph = page.locator("#graph svg")
    expect(graph).to_be_visible()
    node = graph.locator(f'g.node[id*="-s_{step.replace("-", "_")}-"]')
    expect(node).to_have_count(1)
    assert "ffd54f" in node.inner_html()  # the current step's node alone is highlighted
    assert graph.inner_html().count("ffd54f") == 1
    _shot(page, "participant")

    # Take over, write as staff (the fake Twilio receives it), hand back.
    page.click("#take-over")
    expect(page.locator("#takeover .notice")).to_contain_text("The bot is paused")
    page.fill("#staff-text", "Hi Ada, this is Sam from the study team.")
    page.click("#send-staff-message")
    study.run_bot()
    sent = [r.form.get("Body") for r in study.fake.messages_to(ADA)]
    assert "Hi Ada, this is Sam from the study team." in sent
    page.reload()
    expect(page.locator("#transcript .bubble.staff")).to_contain_text("Sam from the study team")
    page.click("#hand-back")
    expect(page.locator("#take-over")).to_be_visible()

    # Bo writes crisis language: the alert is in the inbox; acknowledging it records who.
    study.text_in("I want to kill myself", BO)
    study.run_bot()
    page.goto(study.url + "/console/alerts")
    expect(page.locator("#alerts")).to_contain_text("crisis")
    _shot(page, "alerts")
    page.click('#alerts button:has-text("Acknowledge")')
    expect(page.locator("#alerts .badge").first).to_have_text("acknowledged")
    expect(page.locator("#alerts")).to_contain_text("acknowledged by staff:res@example.org")

    # Export: a streamed download of the same file `tandem export` writes.
    page.goto(study.url + "/console/export")
    with page.expect_download() as download:
        page.click("#export-participants-csv")
    lines = Path(download.value.path()).read_text().splitlines()
    assert lines[0].startswith("participant_id,phone_number") and len(lines) == 3

    # A POST without the session's CSRF token is refused.
    forged = page.request.post(study.url + "/console/logout", form={"x": "1"})
    assert forged.status == 403


def test_a_supervisor_is_refused_a_researcher_page_and_shown_no_link(
    browser: Browser, study: Study
) -> None:
    now = SystemClock().now()
    accounts.add(study.services.store, "sup@example.org", "supervisor", "cli", now)
    accounts.set_password(study.services.store, "sup@example.org", PASSWORD, PASSWORD, now)
    page = browser.new_page()
    _sign_in(page, study, "sup@example.org", PASSWORD)
    expect(page.locator("h1")).to_have_text("Alerts")
    assert (
        page.locator("header nav a", has_text=re.compile("Participants|Enroll|Export")).count() == 0
    )

    answer = page.goto(study.url + "/console/participants")

    assert answer is not None and answer.status == 403
    expect(page.locator("h1")).to_contain_text("403")


def test_an_admin_adds_changes_and_disables_a_staff_account(browser: Browser, study: Study) -> None:
    now = SystemClock().now()
    accounts.add(study.services.store, "admin@example.org", "admin", "cli", now)
    accounts.set_password(study.services.store, "admin@example.org", PASSWORD, PASSWORD, now)
    admin = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(admin, study, "admin@example.org", PASSWORD)
    admin.click("header nav a:has-text('Users')")
    expect(admin.locator("h1")).to_have_text("Users")

    # A bad email is named beside its field; a good one gets a one-time code, shown once.
    admin.fill("#email", "not an email")
    admin.click("#add")
    expect(admin.locator("#email-error")).to_have_text("not an email address")
    admin.fill("#email", "new@example.org")
    admin.select_option("#role", "researcher")
    admin.click("#add")
    code = admin.locator("#one-time-code").inner_text()
    _shot(admin, "users")

    newcomer = browser.new_context().new_page()
    _sign_in(newcomer, study, "new@example.org", code)
    newcomer.fill("#password", PASSWORD)
    newcomer.fill("#repeated", PASSWORD)
    newcomer.click("main button[type=submit]")
    expect(newcomer.locator("h1")).to_contain_text("Participants")

    # A role change ends the newcomer's session; the new role applies from their next sign-in.
    row = admin.locator('#users tr[data-email="new@example.org"]')
    row.locator("select[name=role]").select_option("supervisor")
    row.locator("button.change-role").click()
    expect(row.locator("td").nth(1)).to_have_text("supervisor")
    newcomer.goto(study.url + "/console/participants")
    expect(newcomer.locator("h1")).to_have_text("Sign in")
    _sign_in(newcomer, study, "new@example.org", PASSWORD)
    answer = newcomer.goto(study.url + "/console/participants")
    assert answer is not None and answer.status == 403
    # Disabling ends their session.
    row.locator("input[name=confirm]").check()
    row.locator("button.disable").click()
    expect(row.locator(".badge")).to_have_text("disabled")
    newcomer.goto(study.url + "/console/alerts")
    expect(newcomer.locator("h1")).to_have_text("Sign in")
    actors = {e.meta["actor"] for e in study.services.store.load("staff:new@example.org")}
    assert "staff:admin@example.org" in actors


def test_a_researcher_withdraws_a_participant_from_their_page(
    browser: Browser, study: Study
) -> None:
    now = SystemClock().now()
    accounts.add(study.services.store, "res@example.org", "researcher", "cli", now)
    accounts.set_password(study.services.store, "res@example.org", PASSWORD, PASSWORD, now)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "res@example.org", PASSWORD)
    page.goto(study.url + "/console/enroll")
    page.fill("#phone", CY)
    page.fill("#name", "Cy")
    page.click("#enroll")
    study.run_bot()
    page.reload()
    expect(page.locator("#take-over")).to_be_visible()

    # Without a reason nothing is written and the form says why, beside itself.
    page.click("#withdraw-participant")
    expect(page.locator("#withdraw-error")).to_contain_text("reason: say why")
    expect(page.locator("#withdraw-error")).to_contain_text("tick the box")
    page.fill("#withdraw-reason", "asked to leave by phone")
    page.select_option("#requested-by", "participant")
    page.check("#withdraw-confirm")
    page.click("#withdraw-participant")

    expect(page.locator("#withdrawn")).to_contain_text("asked to leave by phone")
    expect(page.locator("#withdrawn")).to_contain_text("staff:res@example.org")
    expect(page.locator("#take-over")).to_have_count(0)
    expect(page.locator("#withdraw-participant")).to_have_count(0)
    _shot(page, "participant-withdrawn")
    greeted = len(study.fake.messages_to(CY))
    assert greeted >= 1
    study.text_in("hello?", CY)  # nothing more is ever sent to them
    study.run_bot()
    assert len(study.fake.messages_to(CY)) == greeted


def _staff(study: Study, email: str, role: str) -> None:
    now = SystemClock().now()
    accounts.add(study.services.store, email, role, "cli", now)
    accounts.set_password(study.services.store, email, PASSWORD, PASSWORD, now)


def test_an_admin_erases_a_participant_who_then_reads_erased(
    browser: Browser, study: Study
) -> None:
    _staff(study, "admin@example.org", "admin")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "admin@example.org", PASSWORD)
    page.goto(study.url + "/console/enroll")
    page.fill("#phone", CY)
    page.fill("#name", "Cyrilla Quuxley")
    page.click("#enroll")
    participant_id = page.url.rsplit("/", 1)[-1]
    study.run_bot()
    study.text_in("my sister Wilhelmina knows", CY)
    study.run_bot()
    page.reload()
    expect(page.locator("#transcript")).to_contain_text("Wilhelmina")

    # The confirmation is the participant id, typed: anything else erases nothing.
    page.fill("#erase-reason", "asked by letter")
    page.fill("#erase-confirm", "yes")
    page.click("#erase-participant")
    expect(page.locator("#erase-error")).to_contain_text("type the participant id")
    expect(page.locator("#transcript")).to_contain_text("Wilhelmina")
    page.fill("#erase-reason", "asked by letter")
    page.fill("#erase-confirm", participant_id)
    page.click("#erase-participant")

    expect(page.locator("#erased")).to_contain_text("staff:admin@example.org")
    expect(page.locator("h1")).to_contain_text("[erased]")
    expect(page.locator("#transcript")).to_contain_text("[erased]")
    assert "Wilhelmina" not in page.content() and "Quuxley" not in page.content()
    expect(page.locator("#erase-participant")).to_have_count(0)
    _shot(page, "participant-erased")


def test_a_participants_form_and_its_clock_are_on_their_page(
    browser: Browser, study: Study
) -> None:
    _staff(study, "res@example.org", "researcher")
    data = enrolled(phone=CY, name="Cy", intervention="health-intake")
    study.services.store.append(
        participant_stream(data.participant_id),
        [
            data,
            FormExtracted(form="intake", domain="basic_info"),
            FormValueSet(form="intake", key="age", value=47),
            FormValueSet(form="intake", key="occupation", value="night-shift nurse"),
            FormDomainCompleted(form="intake", domain="basic_info"),
            FormExtracted(form="intake", domain="sleep"),
            FormValueSet(form="intake", key="sleep_hours", value=6),
        ],
    )
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    _sign_in(page, study, "res@example.org", PASSWORD)

    page.goto(study.url + f"/console/participants/{data.participant_id}")

    clock = page.locator("#clock-intake")
    expect(clock).to_contain_text("turns 2 of a target of 30 (28 left)")
    expect(clock).to_contain_text("Fields known 3 of")
    expect(page.locator("#form-intake")).to_contain_text("night-shift nurse")
    _shot(page.locator("#form-intake"), "participant-forms")


# Run before any page script: records what the Content-Security-Policy blocks.
CSP_WATCH = """
window.__blocked = [];
document.addEventListener('securitypolicyviolation',
    e => window.__blocked.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def test_htmx_and_mermaid_work_under_the_content_security_policy(
    browser: Browser, study: Study
) -> None:
    _staff(study, "csp@example.org", "researcher")
    data = enrolled(phone=CY, name="Cy", intervention="demo")
    study.services.store.append(participant_stream(data.participant_id), [data])
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(CSP_WATCH)
    _sign_in(page, study, "csp@example.org", PASSWORD)

    answer = page.goto(study.url + f"/console/participants/{data.participant_id}")
    assert answer is not None and "script-src 'self'" in answer.headers["content-security-policy"]
    expect(page.locator("#graph svg")).to_be_visible()  # Mermaid drew the step graph
    study.text_in("arrived after the page loaded", CY)
    # htmx's poll (every 5 s) brings the new message in without a reload.
    expect(page.locator("#transcript .bubble.in")).to_contain_text(
        "arrived after the page loaded", timeout=15_000
    )
    assert page.evaluate("window.__blocked") == []
    assert page.evaluate("typeof htmx") == "object"
    page.goto(study.url + "/console/interventions/demo")
    expect(page.locator("svg").first).to_be_visible()
    assert page.evaluate("window.__blocked") == []


def test_a_cookie_copied_before_sign_out_opens_nothing_in_another_browser(
    browser: Browser, study: Study
) -> None:
    _staff(study, "replay@example.org", "admin")
    owner = browser.new_context()
    page = owner.new_page()
    _sign_in(page, study, "replay@example.org", PASSWORD)
    expect(page.locator("h1")).to_contain_text("Participants")
    copied = owner.cookies()
    thief = browser.new_context()
    thief.add_cookies(copied)
    stolen = thief.new_page()
    stolen.goto(study.url + "/console/users")
    expect(stolen.locator("h1")).to_have_text("Users")  # the copy works while the owner is in

    page.click("header .signout button")
    expect(page.locator("h1")).to_have_text("Sign in")
    stolen.goto(study.url + "/console/users")

    expect(stolen.locator("h1")).to_have_text("Sign in")


def _fits_a_phone(page: Page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{page.url} is {width} px wide on a 390 px screen"


def test_the_console_fits_a_phone_and_an_alert_is_acknowledged_there(
    browser: Browser, study: Study
) -> None:
    _staff(study, "res@example.org", "researcher")
    data = enrolled(phone=CY, name="Cyrilla Quuxley-Montgomery-Wilhelmina")
    stream = participant_stream(data.participant_id)
    study.services.store.append(stream, [data], expected_version=0)
    summary = "participant wrote words from the crisis list in a long message " * 3
    study.services.store.append(
        stream,
        [AlertRaised(alert_id="a-phone", kind="crisis", summary=summary, severity="critical")],
    )
    page = browser.new_page(viewport={"width": 390, "height": 844})
    _sign_in(page, study, "res@example.org", PASSWORD)

    for path in ("/console/participants", f"/console/participants/{data.participant_id}"):
        page.goto(study.url + path)
        _fits_a_phone(page)
    page.goto(study.url + "/console/alerts")
    _fits_a_phone(page)
    button = page.locator("#alert-a-phone button", has_text="Acknowledge")
    button.scroll_into_view_if_needed()
    expect(button).to_be_visible()
    expect(button).to_be_in_viewport()
    _shot(page, "alerts-phone")
    button.click()
    expect(page.locator("#alert-a-phone .badge")).to_have_text("acknowledged")


def test_an_admin_turns_on_a_second_factor_and_signs_in_with_a_code(
    browser: Browser, study: Study
) -> None:
    _staff(study, "totp@example.org", "admin")
    page = browser.new_context().new_page()
    _sign_in(page, study, "totp@example.org", PASSWORD)
    expect(page.locator("h1")).to_contain_text("Participants")
    page.goto(study.url + "/console/password")
    page.click("#two-factor-link")
    secret = page.locator("#totp-secret").inner_text()
    expect(page.locator("#totp-uri")).to_contain_text("otpauth://totp/Tandem:totp%40example.org")
    totp = pyotp.TOTP(secret)
    page.fill("#code", totp.now())
    page.click("main form button[type=submit]")
    expect(page.locator("#two-factor-done")).to_contain_text("The second factor is on")
    page.click("header .signout button")

    _sign_in(page, study, "totp@example.org", PASSWORD)
    expect(page.locator("h1")).to_have_text("Sign-in code")
    # The code of the next step: this step's was used up by the enrolment (no replay).
    page.fill("#code", totp.at(time.time() + 30))
    page.click("main button[type=submit]")

    expect(page.locator("h1")).to_contain_text("Participants")
