"""Enrolling into a study through the API, the console's form, a console CSV and `tandem enroll`:
one service, so the same baseline rules, the same allocation and the arm's intervention."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import BASE_URL, MASTER_KEY, post
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH, BASE
from tests.web.study_apps import LLM_NOWHERE

PILOT = "walk-pilot"
RUNS = {"coach": "habit-coach", "control": "walk-control"}
ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def cli_env(database_url: str) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "DEFAULT_REGION": "US",
        "DEFAULT_TIMEZONE": "America/Toronto",
        "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        "OPENAI_BASE_URL": LLM_NOWHERE,
    }


@pytest.fixture
def services(database_url: str, store: EventStore, clock: FakeClock) -> Services:
    """The console's services with an LLM configured (never called: no turn runs here), as
    walk-pilot's coach arm needs one to be enrolled into."""
    settings = settings_for(
        database_url,
        TANDEM_MASTER_KEY=MASTER_KEY,
        QUIET_HOURS="22:00-08:00",
        OPENAI_BASE_URL=LLM_NOWHERE,
    )
    return build_services(settings, clock=clock, store=store)


def allocation_of(store: EventStore, participant_id: str):  # noqa: ANN201
    (found,) = [
        e for e in store.load(participant_stream(participant_id))
        if e.event_type == "participant.allocated"
    ]  # fmt: skip
    return found.data


def enroll_by(kind: str, app: Flask, console: FlaskClient, env: dict, phone: str, level: str):  # noqa: ANN201
    """Enroll `phone` in walk-pilot (age 40, activity `level`) through `kind`; the id or the
    refusal text."""
    if kind == "api":
        body = {"phone_number": phone, "study": PILOT}
        body["baseline"] = {"activity_level": level, "age": 40} if level else {"age": 40}
        answer = app.test_client().post(BASE, json=body, headers=AUTH)
        ok = answer.status_code == 201
        return (answer.get_json()["result"]["id"], None) if ok else (None, answer.get_json())
    if kind == "console":
        form = {"phone": phone, "study": PILOT, "baseline.age": "40"}
        form |= {"baseline.activity_level": level} if level else {}
        answer = post(console, "/console/enroll", form)
        if answer.status_code == 302:
            return ID.search(answer.headers["Location"]).group(0), None
        return None, html.unescape(answer.get_data(as_text=True))
    args = ["enroll", phone, "--study", PILOT, "--baseline", "age=40"]
    args += ["--baseline", f"activity_level={level}"] if level else []
    result = CliRunner().invoke(cli, args, env=env)
    return (
        (ID.search(result.output).group(0), None)
        if result.exit_code == 0
        else (None, result.output)
    )


@pytest.mark.parametrize("kind", ["api", "console", "cli"])
def test_every_entry_point_allocates_and_runs_the_arms_intervention(
    kind: str, app: Flask, signed_in: Callable, services: Services, database_url: str
) -> None:
    console = signed_in("researcher")
    env = cli_env(database_url)

    made, refusal = enroll_by(kind, app, console, env, "+14155552671", "high")

    assert refusal is None
    allocation = allocation_of(services.store, made)
    row = services.store.projection_row("participants", made)
    assert (row["study"], row["arm"]) == (PILOT, allocation.arm)
    assert row["intervention"] == RUNS[allocation.arm]
    assert allocation.stratum == "activity_level=high"


@pytest.mark.parametrize("kind", ["api", "console", "cli"])
def test_every_entry_point_refuses_a_missing_baseline_field_naming_it(
    kind: str, app: Flask, signed_in: Callable, services: Services, database_url: str
) -> None:
    console = signed_in("researcher")

    made, refusal = enroll_by(kind, app, console, cli_env(database_url), "+14155552672", "")

    assert made is None
    assert "activity_level" in str(refusal) and "required" in str(refusal)
    assert list(services.store.read_all()) == [] or all(
        e.event_type.startswith("staff.") for e in services.store.read_all()
    )


def test_the_console_form_is_generated_from_the_studys_baseline_fields(
    signed_in: Callable,
) -> None:
    console = signed_in("researcher")
    page = console.get(f"/console/enroll?study={PILOT}", base_url=BASE_URL).get_data(as_text=True)

    assert re.search(r'<select id="baseline.activity_level" name="baseline.activity_level">', page)
    assert '<option value="low"' in page and '<option value="high"' in page
    assert re.search(
        r'name="baseline.age" type="number" value="" step="1" min="18" max="100"', page
    )
    assert 'name="intervention"' not in page  # the arm decides it


def test_a_csv_dry_run_names_each_rows_problem_and_the_confirmed_run_names_who_joined(
    signed_in: Callable, services: Services
) -> None:
    console = signed_in("researcher")
    content = (
        "phone,study,activity_level,age\n"
        "+14155552673,walk-pilot,low,30\n"
        "+14155552674,walk-pilot,medium,30\n"
        "+14155552675,walk-pilot,high,\n"
        "+14155552676,walk-pilot,high,61\n"
    )

    dry = post(console, "/console/enroll/csv", {"content": content})
    page = html.unescape(dry.get_data(as_text=True))
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]+)"', page).group(1)
    done = post(
        console,
        "/console/enroll/csv",
        {"content": content, "confirm": "yes", "fingerprint": fingerprint},
    )

    assert "baseline.activity_level: 'medium' is not one of 'low', 'high'" in page
    assert "baseline.age: required by the study" in page
    assert page.count("will enroll") == 2 and "coach" not in page and "control" not in page
    shown = html.unescape(done.get_data(as_text=True))
    assert "2 participants enrolled." in shown
    ids = ID.findall(shown.split('id="enrolled"')[1])
    assert len(set(ids)) == 2
    for made in set(ids):
        allocation = allocation_of(services.store, made)
        assert f"<td>{allocation.arm}</td>" in shown
