"""`/`: a short page linking the API's documentation (and the console, when the app has it);
`/docs/`: Swagger UI from vendored assets; `/openapi.json`: the OpenAPI document."""

from __future__ import annotations

from html import escape
from pathlib import Path

from flask import Response, jsonify, send_from_directory
from flask_openapi3 import OpenAPI

ASSETS = Path(__file__).resolve().parent / "static" / "swagger-ui"
CONSOLE = "/console/"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto; line-height: 1.5">
<h1>{title}</h1>
<p>{description}</p>
<ul>
{links}
</ul>
</body></html>
"""

_SWAGGER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} API</title>
<link rel="stylesheet" href="/docs/static/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({{url: "/openapi.json", dom_id: "#swagger-ui"}});</script>
</body></html>
"""


def register(app: OpenAPI) -> None:
    """Add the three routes as plain Flask rules, so they stay out of the OpenAPI document."""
    title = escape(app.info.title)

    def home() -> Response:
        links = [
            '<li><a href="/docs/">The API, interactive</a> (Swagger UI)</li>',
            '<li><a href="/openapi.json">The OpenAPI document</a> (JSON)</li>',
        ]
        if _has_console(app):
            links.insert(0, f'<li><a href="{CONSOLE}">The researcher console</a></li>')
        page = _PAGE.format(
            title=title, description=escape(app.info.description or ""), links="\n".join(links)
        )
        return Response(page, mimetype="text/html")

    def docs() -> Response:
        return Response(_SWAGGER.format(title=title), mimetype="text/html")

    def asset(name: str) -> Response:
        return send_from_directory(ASSETS, name, max_age=86400)

    app.add_url_rule("/", "home", home, methods=["GET"])
    app.add_url_rule("/docs/", "api_docs", docs, methods=["GET"])
    app.add_url_rule("/docs/static/<path:name>", "api_docs_asset", asset, methods=["GET"])
    app.add_url_rule("/openapi.json", "openapi_json", lambda: jsonify(app.api_doc))


def _has_console(app: OpenAPI) -> bool:
    """Whether a console route is registered (the console is an optional package)."""
    return any(rule.rule.startswith(CONSOLE) for rule in app.url_map.iter_rules())
