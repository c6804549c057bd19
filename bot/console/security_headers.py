"""The headers every console answer carries: a Content-Security-Policy with no inline script,
no framing, no MIME sniffing, no referrer to other sites, and no caching of pages.

The console shows participants' messages, which anyone with a phone can write: the policy is
the second wall behind Jinja's escaping, so that text slipped into a page cannot run as script.
Styles may be inline because Mermaid writes its diagrams' styles into the SVG it draws.
"""

from __future__ import annotations

from flask import Response, request

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def add(response: Response) -> Response:
    """Put the console's security headers on `response`; pages (not the vendored static
    files) are never stored by the browser or a proxy, signed out or not."""
    response.headers.update(HEADERS)
    if request.endpoint != "console.static":
        response.headers["Cache-Control"] = "no-store"
        response.headers["Pragma"] = "no-cache"
    return response
