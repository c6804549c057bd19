"""Concealment: before an allocation, nothing staff can see depends on the next arm. Two
deployments whose secret seeds give different next arms answer the API, render the console's
pages (the enrollment form, a CSV dry run, the study overview, the participants list) and log
exactly the same, once ids, times and tokens are set aside; then their allocations differ."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from flask import Flask

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.studies.allocation import allocate
from bot.studies.catalogue import StudyCatalogue
from bot.studies.seed import study_seed
from bot.web import create_app
from tests.conftest import fresh_database
from tests.console.conftest import PASSWORD, get, post, sign_in, staff_member
from tests.web.conftest import settings_for
from tests.web.researcher import AUTH, BASE
from tests.web.study_apps import BASELINE, LLM_NOWHERE, PILOT, study_catalogue

VOLATILE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # ids
    r"|value=\"[A-Za-z0-9_\-]{20,}\"|\"X-CSRF-Token\": \"[^\"]+\""  # CSRF tokens
    r"|\b[0-9a-f]{64}\b"  # dry-run fingerprints
    r"|\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?"  # times
)
CSV = (
    "phone,study,activity_level,age\n+14155552681,walk-pilot,low,30\n+14155552682,walk-pilot,x,30\n"
)


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


def keys_with_different_next_arms(studies: StudyCatalogue) -> tuple[str, str]:
    """Two master keys whose walk-pilot seeds give the first low-activity participant
    different arms (found by trying keys in order: a fixed search, the same every run)."""
    study = studies.study(PILOT)
    first = {}
    for n in range(50):
        key = f"concealment-test-master-key-{n:02d}-0123456789"
        arm = allocate(study, study_seed(PILOT, key), [], {"activity_level": "low"}).arm
        first.setdefault(arm, key)
        if len(first) == 2:
            return first["coach"], first["control"]
    raise AssertionError("no two keys found")


def deployment(
    request: pytest.FixtureRequest, tmp_path: Path, key: str, studies: StudyCatalogue
) -> Flask:
    tmp_path.mkdir(parents=True, exist_ok=True)
    url = fresh_database("sqlite", request, tmp_path)
    services = build_services(
        settings_for(url, TANDEM_MASTER_KEY=key, OPENAI_BASE_URL=LLM_NOWHERE), clock=FakeClock()
    )
    request.addfinalizer(services.close)
    app = create_app(services, studies.interventions, studies)
    app.testing = True
    return app


def seen_before_allocation(app: Flask, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Everything a researcher, an admin and the API see, and every log line, up to the
    moment before the first allocation."""
    caplog.clear()
    api = app.test_client()
    texts = [
        api.post(
            BASE, json={"phone_number": "+14155552680", "study": PILOT}, headers=AUTH
        ).get_data(as_text=True),
        api.get(BASE, headers=AUTH).get_data(as_text=True),
    ]
    for role in ("researcher", "admin"):
        staff_member(app.extensions["tandem"], f"{role}@example.org", role)
        console = app.test_client()
        sign_in(console, f"{role}@example.org", PASSWORD)
        texts += [
            get(console, f"/console/enroll?study={PILOT}").get_data(as_text=True),
            post(console, "/console/enroll/csv", {"content": CSV}).get_data(as_text=True),
            get(console, "/console/study").get_data(as_text=True),
            get(console, "/console/participants").get_data(as_text=True),
        ]
    texts += [r.getMessage() for r in caplog.records]
    return [VOLATILE.sub("*", t) for t in texts]


def test_nothing_shown_or_logged_before_an_allocation_depends_on_the_next_arm(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    studies: StudyCatalogue,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    coach_key, control_key = keys_with_different_next_arms(studies)
    one = deployment(request, tmp_path / "a", coach_key, studies)
    other = deployment(request, tmp_path / "b", control_key, studies)

    seen_one = seen_before_allocation(one, caplog)
    seen_other = seen_before_allocation(other, caplog)

    assert len(seen_one) >= 10 and seen_one == seen_other
    body = {"phone_number": "+14155552699", "study": PILOT, "baseline": BASELINE}
    arms = [
        app.test_client().post(BASE, json=body, headers=AUTH).get_json()["result"]["arm"]
        for app in (one, other)
    ]
    assert arms == ["coach", "control"]
