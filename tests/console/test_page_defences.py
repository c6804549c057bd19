"""What every console page defends itself with: its security headers, no inline script, only
https media links, and a password rule that refuses common passwords."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from bot.console.participant_page import https_link
from bot.store.event_types.messages import Media, MessageReceived
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import BASE_URL, PASSWORD, get, post
from tests.web.twilio_requests import enroll

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


def _pages(services: Services) -> list[str]:
    participant = enroll(services)["participant_id"]
    return [
        "/console/login",
        "/console/participants",
        f"/console/participants/{participant}",
        f"/console/participants/{participant}/transcript",
        "/console/interventions/demo",
        "/console/users",
        "/console/password",
    ]


def test_every_console_page_sends_the_security_headers(
    services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")

    for path in _pages(services):
        headers = get(client, path).headers
        csp = dict(
            part.strip().split(" ", 1) for part in headers["Content-Security-Policy"].split(";")
        )
        assert csp["script-src"] == "'self'", path
        assert csp["frame-ancestors"] == "'none'", path
        assert headers["X-Content-Type-Options"] == "nosniff", path
        assert headers["Referrer-Policy"] == "no-referrer", path
        assert headers["Cache-Control"] == "no-store", path


def test_a_refusal_and_a_redirect_to_sign_in_send_the_headers_too(
    anonymous: FlaskClient,
) -> None:
    refusal = anonymous.post("/console/login", base_url=BASE_URL)
    redirect = get(anonymous, "/console/participants")

    assert (refusal.status_code, redirect.status_code) == (403, 302)
    for headers in (refusal.headers, redirect.headers):
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["Cache-Control"] == "no-store"


def test_no_console_page_has_an_inline_script(
    services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")

    inline = {
        path: INLINE_SCRIPT.findall(get(client, path).get_data(as_text=True))
        for path in _pages(services)
    }

    assert inline == {path: [] for path in inline}
    assert "<script src=" in get(client, "/console/interventions/demo").get_data(as_text=True)


def test_only_an_https_media_url_is_rendered_as_a_link(
    services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("researcher")
    participant = enroll(services)
    urls = [
        "javascript:alert(document.cookie)",
        "https://api.twilio.com/media/ME1",
        "http://x.org/a",
    ]
    received = MessageReceived(
        message_sid="SM" + "7" * 32,
        from_address=participant["phone"],
        to_address="+15005550006",
        channel="sms",
        body="look",
        media=[Media(url=url) for url in urls],
    )
    services.store.append(participant_stream(participant["participant_id"]), [received])

    page = get(client, f"/console/participants/{participant['participant_id']}/transcript")

    hrefs = re.findall(r'<a href="([^"]*)"', page.get_data(as_text=True))
    assert [h for h in hrefs if "media" in h or h.startswith(("javascript", "http"))] == [
        "https://api.twilio.com/media/ME1"
    ]
    assert "not a link: javascript:alert(document.cookie)" in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("url", "linked"),
    [
        ("https://api.twilio.com/2010-04-01/Media/ME1", True),
        ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("http://example.org/a.jpg", False),
        ("https:///no-host", False),
        ("//example.org/a.jpg", False),
    ],
)
def test_a_media_url_is_a_link_only_if_it_is_https_to_a_host(url: str, linked: bool) -> None:
    assert https_link(url) is linked


@pytest.mark.parametrize("weak", ["aaaaaaaaaaaa", "password1234", "qwertyuiop123"])
def test_a_long_but_common_password_is_refused(
    signed_in: Callable[[str], FlaskClient], weak: str
) -> None:
    client = signed_in("researcher")

    answer = post(
        client, "/console/password", {"current": PASSWORD, "password": weak, "repeated": weak}
    )

    assert answer.status_code == 400
    assert re.search(
        r'id="password-error">choose another password: [^<]+<', answer.get_data(as_text=True)
    )


def test_every_page_links_a_favicon_the_console_serves(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("researcher")
    page = get(client, "/console/study").get_data(as_text=True)

    link = re.search(r'<link rel="icon" type="image/svg\+xml" href="([^"]+)"', page)
    assert link, "the page names its icon (else the browser asks for /favicon.ico: a 404)"
    icon = get(client, link.group(1))
    try:
        assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
        assert b"<svg" in icon.get_data()
    finally:
        icon.close()
