"""The optional TOTP second factor: enrolment, the code after the password, no replay,
turning it off, and CONSOLE_REQUIRE_2FA making admins enrol first."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pyotp
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.runtime.bootstrap import build_services
from bot.store.schema import events, staff_totp
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import (
    BASE_URL,
    MASTER_KEY,
    PASSWORD,
    csrf_of,
    get,
    post,
    sign_in,
    staff_member,
)
from tests.web.conftest import settings_for


def _enrol(client: FlaskClient, services: Services) -> pyotp.TOTP:
    page = get(client, "/console/two-factor").get_data(as_text=True)
    found = re.search(r'id="totp-secret">([A-Z2-7]+)<', page)
    assert found and "otpauth://totp/Tandem:" in page
    totp = pyotp.TOTP(found.group(1))
    done = post(client, "/console/two-factor", {"code": totp.at(services.clock.now())})
    assert done.status_code == 200 and "The second factor is on" in done.get_data(as_text=True)
    return totp


def _code(client: FlaskClient, code: str):  # noqa: ANN202
    page = client.get("/console/login/code", base_url=BASE_URL).get_data(as_text=True)
    return client.post(
        "/console/login/code",
        data={"code": code, "csrf_token": csrf_of(page)},
        base_url=BASE_URL,
    )


def _types(services: Services, stream: str) -> list[str]:
    with services.store.reading() as conn:
        rows = conn.execute(
            select(events.c.event_type).where(events.c.stream_id == stream).order_by(events.c.seq)
        )
        return [r.event_type for r in rows]


def test_enrolment_needs_a_right_code_and_stores_the_secret_sealed(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("admin")
    page = get(client, "/console/two-factor").get_data(as_text=True)
    secret = re.search(r'id="totp-secret">([A-Z2-7]+)<', page)
    assert secret is not None

    wrong = post(client, "/console/two-factor", {"code": "000000"})
    code = pyotp.TOTP(secret.group(1)).at(services.clock.now())
    right = post(client, "/console/two-factor", {"code": code})

    assert wrong.status_code == 400 and "wrong code" in wrong.get_data(as_text=True)
    assert right.status_code == 200
    with services.store.reading() as conn:
        sealed = conn.execute(select(staff_totp.c.sealed)).scalar_one()
    assert secret.group(1) not in sealed
    assert "staff.two_factor_enabled" in _types(services, "staff:admin@example.org")


def test_sign_in_asks_for_the_code_and_a_used_code_cannot_be_replayed(
    app, signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    totp = _enrol(signed_in("admin"), services)
    services.clock.advance(timedelta(seconds=60))
    code = totp.at(services.clock.now())

    first = app.test_client()
    asked = sign_in(first, "admin@example.org", PASSWORD)
    assert asked.status_code == 302 and "/console/login/code" in asked.headers["Location"]
    assert get(first, "/console/participants").status_code == 302  # no session yet
    assert _code(first, "123456" if code != "123456" else "654321").status_code == 401
    assert _code(first, code).status_code == 302
    assert get(first, "/console/participants").status_code == 200

    second = app.test_client()
    assert sign_in(second, "admin@example.org", PASSWORD).status_code == 302
    assert _code(second, code).status_code == 401  # the same code, within its window
    services.clock.advance(timedelta(seconds=30))
    assert _code(second, totp.at(services.clock.now())).status_code == 302


def test_a_code_without_the_password_first_signs_nobody_in(
    app, signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    totp = _enrol(signed_in("admin"), services)
    services.clock.advance(timedelta(seconds=60))
    stranger = app.test_client()

    page = stranger.get("/console/login", base_url=BASE_URL).get_data(as_text=True)
    response = stranger.post(
        "/console/login/code",
        data={"code": totp.at(services.clock.now()), "csrf_token": csrf_of(page)},
        base_url=BASE_URL,
    )

    assert response.status_code == 302 and "/console/login" in response.headers["Location"]
    assert get(stranger, "/console/participants").status_code == 302


def test_turning_it_off_needs_the_password_and_a_code_and_is_recorded(
    app, signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    client = signed_in("admin")
    totp = _enrol(client, services)
    services.clock.advance(timedelta(seconds=60))
    now = services.clock.now()

    refused = post(client, "/console/two-factor", {"current": "nope", "code": totp.at(now)})
    off = post(client, "/console/two-factor", {"current": PASSWORD, "code": totp.at(now)})

    assert refused.status_code == 400
    assert off.status_code == 200 and "The second factor is off" in off.get_data(as_text=True)
    assert _types(services, "staff:admin@example.org")[-1] == "staff.two_factor_disabled"
    again = sign_in(app.test_client(), "admin@example.org", PASSWORD)
    assert again.status_code == 302 and "/console/login/code" not in again.headers["Location"]


def test_console_require_2fa_sends_admins_to_enrol_before_anything_else(
    database_url: str,
    store,
    clock,
    services: Services,  # noqa: ANN001
) -> None:
    app = create_app(
        build_services(
            settings_for(database_url, TANDEM_MASTER_KEY=MASTER_KEY, CONSOLE_REQUIRE_2FA="true"),
            clock=clock,
            store=store,
        )
    )
    staff_member(services, "admin@example.org", "admin")
    staff_member(services, "researcher@example.org", "researcher")
    admin, researcher = app.test_client(), app.test_client()
    assert sign_in(admin, "admin@example.org", PASSWORD).status_code == 302
    assert sign_in(researcher, "researcher@example.org", PASSWORD).status_code == 302

    sent = get(admin, "/console/participants")

    assert sent.status_code == 302 and sent.headers["Location"].endswith("/console/two-factor")
    assert get(researcher, "/console/participants").status_code == 200
    _enrol(admin, services)
    assert get(admin, "/console/participants").status_code == 200
