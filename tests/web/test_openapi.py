"""/openapi.json is a valid OpenAPI document and tells the truth about the researcher API."""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from tests.web.researcher import AUTH, BASE

REF = "#/components/schemas/"


@pytest.fixture
def spec(client: FlaskClient) -> dict[str, Any]:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def api_operations(client: FlaskClient) -> list[tuple[str, str]]:
    """(OpenAPI path, method) of every route the app serves under /conversation/participants."""
    found = []
    for rule in client.application.url_map.iter_rules():
        if not rule.rule.startswith(BASE):
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        found += [(path, m.lower()) for m in rule.methods - {"HEAD", "OPTIONS"}]
    return sorted(found)


def test_the_document_is_valid_openapi(spec: dict[str, Any]) -> None:
    validate(spec)


def test_the_app_serves_every_researcher_operation(client: FlaskClient) -> None:
    assert api_operations(client) == [
        (BASE, "get"),
        (BASE, "post"),
        (f"{BASE}/{{participant_id}}", "delete"),
        (f"{BASE}/{{participant_id}}", "get"),
        (f"{BASE}/{{participant_id}}", "put"),
        (f"{BASE}/{{participant_id}}/erase", "post"),
        (f"{BASE}/{{participant_id}}/events", "get"),
        (f"{BASE}/{{participant_id}}/forms", "get"),
        (f"{BASE}/{{participant_id}}/messages", "get"),
        (f"{BASE}/{{participant_id}}/timers", "get"),
        (f"{BASE}/{{participant_id}}/withdraw", "post"),
    ]


def test_every_route_is_documented_with_bearer_security_and_models(
    client: FlaskClient, spec: dict[str, Any]
) -> None:
    for path, method in api_operations(client):
        operation = spec["paths"][path][method]
        assert operation["security"] == [{"bearerAuth": []}], (path, method)
        responses = operation["responses"]
        created = method == "post" and path == BASE
        success = responses["201" if created else "200"]
        assert success["content"]["application/json"]["schema"]["$ref"].startswith(REF)
        for code in ("400", "401", "404"):
            schema = responses[code]["content"]["application/json"]["schema"]
            assert schema == {"$ref": f"{REF}ErrorResponse"}, (path, method, code)
        if method in ("post", "put"):
            body = operation["requestBody"]["content"]["application/json"]["schema"]
            assert body["$ref"].startswith(REF)
        if "{participant_id}" in path:
            assert "participant_id" in [p["name"] for p in operation["parameters"]]


def test_the_bearer_scheme_is_declared(spec: dict[str, Any]) -> None:
    assert spec["components"]["securitySchemes"]["bearerAuth"]["type"] == "http"
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_the_documented_models_match_what_is_served(
    client: FlaskClient, spec: dict[str, Any]
) -> None:
    schemas = spec["components"]["schemas"]
    enrolled = client.post(BASE, json={"phone_number": "+14155552671"}, headers=AUTH)
    served = set(enrolled.get_json()["result"])
    assert served == set(schemas["ParticipantOut"]["properties"])
    refused = client.post(BASE, json={}, headers=AUTH).get_json()
    assert set(refused) <= set(schemas["ErrorResponse"]["properties"])
    assert set(schemas["EnrollRequest"]["properties"]) >= {"phone_number", "timezone", "channel"}


def test_paging_parameters_are_documented_with_their_bounds(spec: dict[str, Any]) -> None:
    parameters = {p["name"]: p for p in spec["paths"][BASE]["get"]["parameters"]}
    assert parameters["limit"]["schema"]["maximum"] == 1000
    assert parameters["offset"]["schema"]["minimum"] == 0
    assert "unenrolled" in str(parameters["status"]["schema"])


@pytest.mark.parametrize(
    ("path", "required"),
    [
        ("/webhooks/twilio/inbound", ["MessageSid", "From", "To"]),
        ("/webhooks/twilio/status", ["MessageSid", "MessageStatus"]),
    ],
)
def test_the_webhooks_document_their_form_body_and_signature_header(
    spec: dict[str, Any], path: str, required: list[str]
) -> None:
    operation = spec["paths"][path]["post"]
    form = operation["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert form["required"] == required
    assert set(required) <= set(form["properties"])
    [header] = operation["parameters"]
    assert (header["name"], header["in"], header["required"]) == (
        "X-Twilio-Signature",
        "header",
        True,
    )
    assert {"200", "400", "403", "413", "503"} <= set(operation["responses"])


def test_put_documents_null_only_where_null_is_accepted(spec: dict[str, Any]) -> None:
    body = spec["components"]["schemas"]["UpdateRequest"]["properties"]

    def takes_null(prop: dict[str, Any]) -> bool:
        return any(option.get("type") == "null" for option in prop.get("anyOf", []))

    assert {name for name, prop in body.items() if takes_null(prop)} == {
        "name",
        "gender",
        "ethnicity",
        "background",
    }


def test_the_erase_operation_documents_its_confirmation_and_refusals(
    spec: dict[str, Any],
) -> None:
    operation = spec["paths"][f"{BASE}/{{participant_id}}/erase"]["post"]
    assert {"200", "400", "404", "409"} <= set(operation["responses"])
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    fields = spec["components"]["schemas"][body.removeprefix(REF)]["properties"]
    assert {"confirm", "reason", "requested_by"} <= set(fields)
    assert "repeat" in fields["confirm"]["description"].lower()
