"""/health reports the process and its database."""

from __future__ import annotations

from flask.testing import FlaskClient


def test_health_reports_a_reachable_database(client: FlaskClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json()["database"] == "ok"


def test_the_openapi_document_is_served(client: FlaskClient) -> None:
    response = client.get("/openapi.json")
    assert response.status_code == 200
    assert "/health" in response.get_json()["paths"]


def test_an_unknown_path_is_a_json_404(client: FlaskClient) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404
    assert response.get_json()["status"] == "error"
