"""POST /conversation/participants with a study: baseline fields checked, the arm drawn in the
enrolling transaction and answered (unless the study is blinded), STUDY as the default."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from bot.core.clock import FakeClock
from bot.core.config import ConfigError
from bot.store.event_store import EventStore
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import Study
from tests.web.researcher import AUTH, BASE, events_of
from tests.web.study_apps import (
    BASELINE,
    BLIND,
    PILOT,
    study_app,
    study_catalogue,
    study_client,
)


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    return study_catalogue(tmp_path_factory.mktemp("studies"))


@pytest.fixture
def client(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue
) -> FlaskClient:
    return study_client(database_url, store, clock, studies)


def post(client: FlaskClient, **body: object):  # noqa: ANN201
    return client.post(BASE, json={"phone_number": "+14155552671", **body}, headers=AUTH)


def test_enrolling_into_a_study_answers_the_arm_and_runs_its_intervention(
    client: FlaskClient, store: EventStore
) -> None:
    response = post(client, study=PILOT, baseline=BASELINE)

    assert response.status_code == 201, response.get_json()
    result = response.get_json()["result"]
    (allocated,) = events_of(store, result["id"], "participant.allocated")
    assert (result["study"], result["arm"]) == (PILOT, allocated.data.arm)
    runs = {"coach": "habit-coach", "control": "walk-control"}[allocated.data.arm]
    assert result["intervention"] == runs
    assert allocated.data.baseline == BASELINE and allocated.data.stratum == "activity_level=low"
    assert allocated.meta["actor"].startswith("api:")


@pytest.mark.parametrize(
    ("baseline", "field", "words"),
    [
        ({"activity_level": "low"}, "baseline.age", "required"),
        ({"activity_level": "medium", "age": 34}, "baseline.activity_level", "'medium'"),
        ({"activity_level": "low", "age": "34"}, "baseline.age", "'34'"),
        ({"activity_level": "low", "age": 12}, "baseline.age", "outside"),
        ({**BASELINE, "bmi": 22}, "baseline.bmi", "not a baseline field"),
    ],
)
def test_a_missing_or_invalid_baseline_field_is_a_400_naming_it(
    client: FlaskClient, store: EventStore, baseline: dict, field: str, words: str
) -> None:
    response = post(client, study=PILOT, baseline=baseline)

    assert response.status_code == 400
    body = response.get_json()
    assert body["message"].startswith(f"{field}: ") and words in body["message"]
    assert body["errors"][0]["field"] == field
    assert list(store.read_all()) == []


def test_every_wrong_baseline_field_is_listed(client: FlaskClient) -> None:
    response = post(client, study=PILOT, baseline={"activity_level": "x"})

    fields = [e["field"] for e in response.get_json()["errors"]]
    assert fields == ["baseline.activity_level", "baseline.age"]


def test_an_unknown_study_is_a_400_naming_the_known_ones(client: FlaskClient) -> None:
    response = post(client, study="walk-pilots", baseline=BASELINE)

    assert response.status_code == 400
    message = response.get_json()["message"]
    assert message.startswith("study: no study 'walk-pilots'") and PILOT in message


def test_a_study_and_an_intervention_together_are_refused(client: FlaskClient) -> None:
    response = post(client, study=PILOT, intervention="demo", baseline=BASELINE)

    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "intervention"


def test_baseline_values_without_a_study_are_refused(client: FlaskClient) -> None:
    response = post(client, baseline=BASELINE)

    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "baseline"


def test_a_blinded_study_answers_no_arm_and_no_intervention_here_or_later(
    client: FlaskClient, store: EventStore
) -> None:
    response = post(client, study=BLIND, baseline=BASELINE)

    assert response.status_code == 201
    result = response.get_json()["result"]
    (allocated,) = events_of(store, result["id"], "participant.allocated")
    for shown in (
        result,
        client.get(f"{BASE}/{result['id']}", headers=AUTH).get_json()["result"],
        client.get(BASE, headers=AUTH).get_json()["result"][0],
    ):
        assert (shown["study"], shown["arm"], shown["intervention"]) == (BLIND, None, None)
    texts = [
        client.get(f"{BASE}/{result['id']}", headers=AUTH).get_data(as_text=True),
        client.get(BASE, headers=AUTH).get_data(as_text=True),
    ]
    intervention = {"coach": "habit-coach", "control": "walk-control"}[allocated.data.arm]
    assert not any(intervention in text for text in texts)


def test_study_setting_is_the_default_for_enrollments_naming_none(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue
) -> None:
    client = study_client(database_url, store, clock, studies, STUDY=PILOT)

    refused = post(client)
    joined = post(client, baseline=BASELINE)
    outside = post(client, phone_number="+14155552672", intervention="demo")

    assert refused.status_code == 400
    assert refused.get_json()["errors"][0]["field"] == "baseline.activity_level"
    assert joined.status_code == 201 and joined.get_json()["result"]["study"] == PILOT
    assert outside.status_code == 201 and outside.get_json()["result"]["study"] is None


def test_a_study_setting_naming_no_study_refuses_to_start(
    database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue
) -> None:
    with pytest.raises(ConfigError, match="STUDY='nope'"):
        study_app(database_url, store, clock, studies, STUDY="nope")


def test_the_shipped_study_is_not_blinded_and_its_copy_is(studies: StudyCatalogue) -> None:
    catalogue = studies
    assert isinstance(catalogue.study(PILOT), Study)
    assert (catalogue.blinded(PILOT), catalogue.blinded(BLIND)) == (False, True)
