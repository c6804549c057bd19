"""Staff sign-in: one-time codes, passwords, throttling, CSRF, roles, sign-out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from flask.testing import FlaskClient
from sqlalchemy import select

from bot.console import accounts
from bot.store.schema import events, staff_credentials
from bot.store.services import Services
from tests.console.conftest import BASE_URL, PASSWORD, get, post, sign_in, staff_member


def _types(services: Services, stream: str) -> list[str]:
    with services.store.reading() as conn:
        rows = conn.execute(
            select(events.c.event_type).where(events.c.stream_id == stream).order_by(events.c.seq)
        )
        return [r.event_type for r in rows]


def test_a_new_account_signs_in_once_with_its_code_then_must_choose_a_password(
    app, services: Services, anonymous: FlaskClient
) -> None:
    code = accounts.add(
        services.store, "Ada@Example.org", "researcher", "cli", services.clock.now()
    )

    response = sign_in(anonymous, "ada@example.org", code)
    assert response.status_code == 302
    assert response.headers["Location"].endswith("/console/password")
    assert get(anonymous, "/console/participants").headers["Location"].endswith("/password")

    short = post(anonymous, "/console/password", {"password": "short", "repeated": "short"})
    assert short.status_code == 400
    assert "at least 12 characters" in short.get_data(as_text=True)
    chosen = post(anonymous, "/console/password", {"password": PASSWORD, "repeated": PASSWORD})
    assert chosen.status_code == 302
    assert get(anonymous, "/console/participants").status_code == 200

    assert sign_in(app.test_client(), "ada@example.org", code).status_code == 401
    assert sign_in(app.test_client(), "ada@example.org", PASSWORD).status_code == 302
    assert _types(services, "staff:ada@example.org") == [
        "staff.added",
        "staff.signed_in",
        "staff.password_set",
        "staff.signed_in",
    ]
    with services.store.reading() as conn:
        stored = conn.execute(select(staff_credentials.c.secret_hash)).scalar_one()
    assert stored.startswith("$argon2id$") and PASSWORD not in stored


def test_a_wrong_password_is_refused_with_a_message_beside_the_field(
    services: Services, anonymous: FlaskClient
) -> None:
    staff_member(services, "bo@example.org", "researcher")

    response = sign_in(anonymous, "bo@example.org", "not the password")

    assert response.status_code == 401
    page = response.get_data(as_text=True)
    assert 'id="password-error"' in page and "Wrong email or password" in page
    assert get(anonymous, "/console/participants").status_code == 302


def test_five_failed_sign_ins_lock_the_email_even_for_the_right_password(
    app, services: Services
) -> None:
    staff_member(services, "cy@example.org", "researcher")
    for _ in range(5):
        assert sign_in(app.test_client(), "cy@example.org", "guess").status_code == 401

    locked = sign_in(app.test_client(), "cy@example.org", PASSWORD)

    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.get_data(as_text=True)
    services.clock.advance(timedelta(minutes=16))
    assert sign_in(app.test_client(), "cy@example.org", PASSWORD).status_code == 302


def test_a_post_without_the_csrf_token_is_refused_and_writes_nothing(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")
    before = services.store.version("staff:researcher@example.org")

    response = client.post("/console/logout", data={}, base_url=BASE_URL)
    forged = client.post("/console/logout", data={"csrf_token": "forged"}, base_url=BASE_URL)

    assert response.status_code == 403 and forged.status_code == 403
    assert "did not come from the console" in response.get_data(as_text=True)
    assert services.store.version("staff:researcher@example.org") == before
    assert get(client, "/console/participants").status_code == 200


def test_a_supervisor_is_refused_the_participants_page_and_is_shown_no_link_to_it(
    signed_in: Callable[[str], FlaskClient],
) -> None:
    client = signed_in("supervisor")

    refused = get(client, "/console/participants")
    inbox = get(client, "/console/alerts").get_data(as_text=True)

    assert refused.status_code == 403
    assert "/console/participants" not in inbox
    assert "/console/enroll" not in inbox
    assert get(client, "/console/enroll").status_code == 403


def test_signing_out_ends_the_session_and_is_recorded(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("admin")

    response = post(client, "/console/logout")

    assert response.status_code == 302
    assert get(client, "/console/participants").status_code == 302
    assert _types(services, "staff:admin@example.org")[-1] == "staff.signed_out"


def test_a_disabled_account_loses_its_session_at_the_next_request(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("researcher")

    accounts.disable(services.store, "researcher@example.org", by="cli")

    response = get(client, "/console/participants")
    assert response.status_code == 302 and "/console/login" in response.headers["Location"]
    assert sign_in(client, "researcher@example.org", PASSWORD).status_code == 401


def test_the_session_cookie_is_signed_secure_and_http_only(
    app, services: Services, anonymous: FlaskClient
) -> None:
    staff_member(services, "di@example.org", "admin")

    response = sign_in(anonymous, "di@example.org", PASSWORD)

    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith("tandem_console=")
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "di@example.org" not in cookie  # signed and encoded, not a readable email field


def test_without_a_master_key_the_console_says_it_is_off(database_url: str, store) -> None:  # noqa: ANN001
    from bot.runtime.bootstrap import build_services
    from bot.web import create_app
    from tests.web.conftest import settings_for

    app = create_app(build_services(settings_for(database_url), store=store))

    response = app.test_client().get("/console/login")

    assert response.status_code == 503
    assert "TANDEM_MASTER_KEY" in response.get_data(as_text=True)


def test_a_session_cookie_altered_by_one_character_signs_nobody_in(
    app, signed_in: Callable[[str], FlaskClient]
) -> None:
    client = signed_in("admin")
    cookie = client.get_cookie("tandem_console", domain="tandem.example.org", path="/console")
    assert cookie is not None and get(client, "/console/participants").status_code == 200
    payload, _, signature = cookie.value.rpartition(".")
    # The signature's first character: every one of its six bits is the HMAC's. Not its last,
    # which holds four: a change in the other two (B for A) decodes to the same signature, and
    # the test passed or failed by the cookie's luck.
    flipped = f"{payload}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"
    other = app.test_client()
    other.set_cookie("tandem_console", flipped, domain="tandem.example.org", path="/console")

    response = get(other, "/console/participants")

    assert response.status_code == 302 and "/console/login" in response.headers["Location"]
