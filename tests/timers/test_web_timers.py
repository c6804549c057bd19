"""`GET /conversation/participants/{id}/timers`, and the web process never runs a scheduler."""

from __future__ import annotations

import subprocess
import sys
import uuid
from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.event_types.timers import TimerCancelled
from bot.timers import one_shot
from bot.timers.schedules import create_daily
from bot.web import create_app
from tests.timers.conftest import Harness
from tests.timers.live import ROOT

TOKEN = "timers-test-token-0123456789abcdefgh"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(database_url: str, store: EventStore, clock: FakeClock) -> FlaskClient:
    settings = load_settings(
        {
            "DATABASE_URL": database_url,
            "TANDEM_API_TOKENS": TOKEN,
            "PUBLIC_BASE_URL": "https://tandem.example.org",
            "TWILIO_ACCOUNT_SID": "AC" + "0" * 32,
            "TWILIO_AUTH_TOKEN": "test-auth-token",
            "TWILIO_FROM_NUMBER": "+15005550006",
            "QUIET_HOURS": "22:00-08:00",
        },
        env_file=None,
    )
    app = create_app(build_services(settings, clock=clock, store=store))
    app.testing = True
    return app.test_client()


def test_the_timers_of_a_participant_are_listed_with_their_schedules(
    client: FlaskClient, harness: Harness
) -> None:
    person = harness.enroll(timezone="America/Toronto")
    now = harness.clock.now()
    daily = create_daily(person, "23:00", "daily", {"text": "Evening"}, now)
    gone = one_shot.at(person, now + timedelta(hours=1), "hi")
    harness.append(person["participant_id"], [*daily, gone])
    harness.append(person["participant_id"], [TimerCancelled(timer_id=gone.timer_id, reason="x")])

    reply = client.get(
        f"/conversation/participants/{person['participant_id']}/timers", headers=AUTH
    )

    assert reply.status_code == 200
    result = reply.get_json()["result"]
    assert {(t["kind"], t["status"]) for t in result["timers"]} == {
        ("daily", "scheduled"),
        ("at", "cancelled"),
    }
    (schedule,) = result["schedules"]
    assert schedule["when"] == "23:00" and schedule["next_timer_id"] == daily[1].timer_id
    assert schedule["note"] == "deferred to the end of quiet hours"
    daily_timer = next(t for t in result["timers"] if t["kind"] == "daily")
    assert daily_timer["due_at_local"].startswith(daily[1].local_time[:16])


def test_timers_can_be_filtered_by_status(client: FlaskClient, harness: Harness) -> None:
    person = harness.enroll()
    harness.append(person["participant_id"], [one_shot.at(person, harness.clock.now(), "hi")])
    url = f"/conversation/participants/{person['participant_id']}/timers?status=fired"
    reply = client.get(url, headers=AUTH)
    assert reply.status_code == 200 and reply.get_json()["result"]["timers"] == []


def test_timers_need_a_bearer_token(client: FlaskClient, harness: Harness) -> None:
    person = harness.enroll()
    reply = client.get(f"/conversation/participants/{person['participant_id']}/timers")
    assert reply.status_code == 401


def test_the_timers_of_an_unknown_participant_are_a_404(client: FlaskClient) -> None:
    reply = client.get(f"/conversation/participants/{uuid.uuid4()}/timers", headers=AUTH)
    assert reply.status_code == 404


def test_the_web_app_never_imports_the_scheduler() -> None:
    probe = (
        "import sys; import bot.web; "
        "bad = [m for m in ('apscheduler', 'bot.timers.scheduler') if m in sys.modules]; "
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", probe], cwd=ROOT).returncode == 0


def test_an_unknown_status_filter_is_a_400_naming_the_field(
    client: FlaskClient, harness: Harness
) -> None:
    person = harness.enroll()
    url = f"/conversation/participants/{person['participant_id']}/timers?status=later"
    reply = client.get(url, headers=AUTH)
    assert reply.status_code == 400 and "status" in reply.get_json()["message"]
