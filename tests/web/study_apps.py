"""Apps for enrolling into studies: a studies folder holding walk-pilot as shipped and a blinded
copy of it (`walk-blind`), and settings with a master key (allocation needs the secret)."""

from __future__ import annotations

from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import intervention_catalogue
from bot.store.event_store import EventStore
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.web import create_app
from tests.conftest import TEST_MASTER_KEY
from tests.web.conftest import settings_for

PILOT = "walk-pilot"
BLIND = "walk-blind"
BASELINE = {"activity_level": "low", "age": 34}
# walk-pilot's coach arm (habit-coach) needs an LLM, so enrolling into the study is refused
# without one; these apps configure one that is never called (nothing runs a turn here).
LLM_NOWHERE = "http://127.0.0.1:9/v1"


def studies_folder(root: Path) -> Path:
    """walk-pilot and walk-blind (the same study, `blinded: true`) under `root`."""
    text = (STUDIES / PILOT / "study.yaml").read_text()
    for slug, shown in ((PILOT, text), (BLIND, text.replace("blinded: false", "blinded: true"))):
        (root / slug).mkdir(parents=True)
        (root / slug / "study.yaml").write_text(shown)
    return root


def study_catalogue(root: Path) -> StudyCatalogue:
    """The studies of `studies_folder(root)`, read once (share it across a module's tests)."""
    catalogue = StudyCatalogue(studies_folder(root), intervention_catalogue())
    catalogue.blinded(PILOT), catalogue.blinded(BLIND)  # read (and validated) now
    return catalogue


def study_app(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue, **env: str
) -> Flask:
    """An app over the test's database enrolling into `studies`."""
    env = {"TANDEM_MASTER_KEY": TEST_MASTER_KEY, "OPENAI_BASE_URL": LLM_NOWHERE, **env}
    services = build_services(settings_for(database_url, **env), clock=clock, store=store)
    app = create_app(services, studies.interventions, studies)
    app.testing = True
    return app


def study_client(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue, **env: str
) -> FlaskClient:
    return study_app(database_url, store, clock, studies, **env).test_client()
