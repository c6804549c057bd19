"""`/` links the API's documentation (and the console when there is one); `/docs/` is Swagger
UI served from vendored assets, never a CDN."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from bot.store.services import Services
from bot.web import create_app


def test_the_home_page_links_the_api_docs_and_the_openapi_document(client: FlaskClient) -> None:
    response = client.get("/")

    assert response.status_code == 200
    assert response.mimetype == "text/html"
    links = re.findall(r'href="([^"]+)"', response.text)
    assert links == ["/console/", "/docs/", "/openapi.json"]  # the app serves the console
    assert "install" not in response.text.lower()  # not flask-openapi3's plugin page


def test_the_home_page_links_the_console_when_the_app_has_one(services: Services) -> None:
    app = create_app(services)
    app.add_url_rule("/console/", "console_stand_in", lambda: "console")

    response = app.test_client().get("/")

    assert re.findall(r'href="([^"]+)"', response.text)[0] == "/console/"


def test_the_api_page_loads_swagger_ui_only_from_this_server(client: FlaskClient) -> None:
    page = client.get("/docs/")

    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources == ["/docs/static/swagger-ui.css", "/docs/static/swagger-ui-bundle.js"]
    assert '"/openapi.json"' in page.text
    for source in sources:
        asset = client.get(source)
        assert asset.status_code == 200 and len(asset.data) > 10_000
        asset.close()
    notice = client.get("/docs/static/LICENSE")
    assert "Apache License" in notice.text
    notice.close()


def test_the_openapi_document_is_still_served_at_its_path(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").get_json()
    assert "/conversation/participants" in spec["paths"]
    assert "/" not in spec["paths"] and "/docs/" not in spec["paths"]
