"""Console sessions end on the server: a cookie replayed after sign-out, a password change, a
role change or its lifetime signs nobody in; polling does not keep a session alive."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from bot.console import accounts, sessions
from bot.core.clock import FakeClock
from bot.store.schema import console_sessions
from bot.store.services import Services
from tests.console.conftest import BASE_URL, PASSWORD, get, post, sign_in, staff_member
from tests.web.twilio_requests import enroll

DOMAIN = "tandem.example.org"
NEW_PASSWORD = "a wren nests in the old kiln"


def _cookie(client: FlaskClient) -> str:
    cookie = client.get_cookie("tandem_console", domain=DOMAIN, path="/console")
    assert cookie is not None
    return cookie.value


def _replayed(app: Flask, cookie: str) -> FlaskClient:
    """Another browser holding a copy of `cookie`."""
    other = app.test_client()
    other.set_cookie("tandem_console", cookie, domain=DOMAIN, path="/console")
    return other


def _sent_to_sign_in(client: FlaskClient, path: str = "/console/participants") -> bool:
    response = get(client, path)
    return response.status_code == 302 and response.headers["Location"].startswith("/console/login")


def test_a_cookie_replayed_after_sign_out_gets_the_sign_in_page(
    app: Flask, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    copied = _cookie(client)
    assert get(_replayed(app, copied), "/console/participants").status_code == 200

    post(client, "/console/logout")

    assert _sent_to_sign_in(_replayed(app, copied))


def test_a_cookie_replayed_after_a_password_change_elsewhere_gets_the_sign_in_page(
    app: Flask, services: Services
) -> None:
    staff_member(services, "ed@example.org", "researcher")
    laptop, phone = app.test_client(), app.test_client()
    sign_in(laptop, "ed@example.org", PASSWORD)
    sign_in(phone, "ed@example.org", PASSWORD)
    copied = _cookie(laptop)

    changed = post(
        phone,
        "/console/password",
        {"current": PASSWORD, "password": NEW_PASSWORD, "repeated": NEW_PASSWORD},
    )

    assert changed.status_code == 302
    assert _sent_to_sign_in(laptop)
    assert _sent_to_sign_in(_replayed(app, copied))
    assert get(phone, "/console/participants").status_code == 200  # the changer goes on


def test_a_password_change_without_the_current_password_is_refused(
    app: Flask, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("researcher")

    wrong = post(
        client,
        "/console/password",
        {"current": "not my password", "password": NEW_PASSWORD, "repeated": NEW_PASSWORD},
    )

    assert wrong.status_code == 400
    assert "not your current password" in wrong.get_data(as_text=True)
    assert sign_in(app.test_client(), "researcher@example.org", PASSWORD).status_code == 302
    assert sign_in(app.test_client(), "researcher@example.org", NEW_PASSWORD).status_code == 401


def test_a_cookie_past_the_absolute_lifetime_gets_the_sign_in_page(
    app: Flask, signed_in: Callable[[str], FlaskClient], clock: FakeClock
) -> None:
    client = signed_in("admin")
    copied = _cookie(client)
    step = sessions.IDLE / 2
    elapsed = timedelta(0)
    while elapsed + step < sessions.ABSOLUTE:  # busy all day: never idle
        clock.advance(step)
        elapsed += step
        assert get(client, "/console/participants").status_code == 200

    clock.advance(sessions.ABSOLUTE - elapsed)

    assert _sent_to_sign_in(_replayed(app, copied))
    assert _sent_to_sign_in(client)


def test_a_session_left_alone_past_the_idle_timeout_gets_the_sign_in_page(
    signed_in: Callable[[str], FlaskClient], clock: FakeClock
) -> None:
    client = signed_in("admin")
    clock.advance(sessions.IDLE - timedelta(minutes=1))
    assert get(client, "/console/participants").status_code == 200

    clock.advance(sessions.IDLE)

    assert _sent_to_sign_in(client)


def test_the_transcripts_polling_does_not_keep_an_idle_session_alive(
    services: Services, signed_in: Callable[[str], FlaskClient], clock: FakeClock
) -> None:
    client = signed_in("researcher")
    participant = enroll(services)["participant_id"]
    poll = f"/console/participants/{participant}/transcript"
    page = f"/console/participants/{participant}"
    assert get(client, page).status_code == 200
    polled = []
    for _ in range(6):  # an open tab, polling while nobody looks
        clock.advance(sessions.IDLE / 6 - timedelta(seconds=1))
        polled.append(get(client, poll, headers={"HX-Request": "true"}).status_code)
    assert polled == [200] * 6

    clock.advance(timedelta(seconds=10))
    answer = get(client, poll, headers={"HX-Request": "true"})

    assert answer.headers.get("HX-Redirect") == "/console/login"
    assert _sent_to_sign_in(client, page)


def test_a_one_time_code_signs_in_only_once(app: Flask, services: Services) -> None:
    code = accounts.add(
        services.store, "fay@example.org", "researcher", "cli", services.clock.now()
    )

    first = sign_in(app.test_client(), "fay@example.org", code)
    second = sign_in(app.test_client(), "fay@example.org", code)

    assert first.status_code == 302 and first.headers["Location"].endswith("/console/password")
    assert second.status_code == 401


def test_the_session_a_code_opened_ends_when_the_password_is_set(
    app: Flask, services: Services
) -> None:
    code = accounts.add(services.store, "gus@example.org", "admin", "cli", services.clock.now())
    invitee = app.test_client()
    sign_in(invitee, "gus@example.org", code)
    copied = _cookie(invitee)

    chosen = post(
        invitee, "/console/password", {"password": NEW_PASSWORD, "repeated": NEW_PASSWORD}
    )

    assert chosen.status_code == 302
    assert _sent_to_sign_in(_replayed(app, copied), "/console/users")
    assert get(invitee, "/console/users").status_code == 200


def test_the_cookie_is_not_resent_on_every_request(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("admin")

    response = client.get("/console/participants", base_url=BASE_URL)

    assert response.status_code == 200
    assert "Set-Cookie" not in response.headers


def test_disabling_an_account_deletes_its_session_records(
    app: Flask, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    admin = signed_in("admin")
    staff_member(services, "hal@example.org", "researcher")
    for _ in range(2):
        sign_in(app.test_client(), "hal@example.org", PASSWORD)
    assert _open_sessions(services, "hal@example.org") == 2

    post(admin, "/console/users/disable", {"email": "hal@example.org", "confirm": "yes"})

    assert _open_sessions(services, "hal@example.org") == 0
    assert _open_sessions(services, "admin@example.org") == 1


def _open_sessions(services: Services, email: str) -> int:
    with services.store.reading() as conn:
        return conn.execute(
            select(func.count())
            .select_from(console_sessions)
            .where(console_sessions.c.email == email)
        ).scalar_one()
