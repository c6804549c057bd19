"""Resetting a staff member's lost second factor on the users page (the same act as `tandem
users reset-2fa`): recorded with the admin who did it, confirmed first, refused for an unknown
account, one's own or one without a second factor; the owner then signs in with the password
alone and enrols again."""

from __future__ import annotations

from collections.abc import Callable

from flask.testing import FlaskClient

from bot.runtime.bootstrap import build_services
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import MASTER_KEY, PASSWORD, get, post, sign_in, staff_member
from tests.console.test_two_factor import _enrol
from tests.web.conftest import settings_for

ADMIN = "staff:admin@example.org"
BO = "bo@example.org"


def _with_a_second_factor(app, services: Services, email: str, role: str) -> None:  # noqa: ANN001
    staff_member(services, email, role)
    client = app.test_client()
    assert sign_in(client, email, PASSWORD).status_code == 302
    _enrol(client, services)


def test_an_admin_resets_a_lost_second_factor_and_its_owner_signs_in_with_the_password(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    admin = signed_in("admin")
    _with_a_second_factor(app, services, BO, "researcher")
    asked = sign_in(app.test_client(), BO, PASSWORD)
    assert "/console/login/code" in asked.headers["Location"]
    page = get(admin, "/console/users").get_data(as_text=True)
    assert "Reset second factor" in page

    unconfirmed = post(admin, "/console/users/reset-2fa", {"email": BO})
    assert unconfirmed.status_code == 400 and "tick the box" in unconfirmed.get_data(as_text=True)
    answer = post(admin, "/console/users/reset-2fa", {"email": BO, "confirm": "yes"})

    assert answer.status_code == 302
    recorded = services.store.load(f"staff:{BO}")[-1]
    assert (recorded.event_type, recorded.data.model_dump(), recorded.meta["actor"]) == (
        "staff.two_factor_reset",
        {"email": BO, "by": ADMIN},
        ADMIN,
    )
    again = sign_in(app.test_client(), BO, PASSWORD)
    assert again.status_code == 302 and "/console/login/code" not in again.headers["Location"]
    assert "Reset second factor" not in get(admin, "/console/users").get_data(as_text=True)
    twice = post(admin, "/console/users/reset-2fa", {"email": BO, "confirm": "yes"})
    assert twice.status_code == 409 and "no second factor" in twice.get_data(as_text=True)


def test_an_unknown_account_or_ones_own_second_factor_is_refused(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    admin = signed_in("admin")
    _enrol(admin, services)

    ghost = post(
        admin, "/console/users/reset-2fa", {"email": "ghost@example.org", "confirm": "yes"}
    )
    own = post(admin, "/console/users/reset-2fa", {"email": "admin@example.org", "confirm": "yes"})

    assert ghost.status_code == 404 and "has no account" in ghost.get_data(as_text=True)
    assert own.status_code == 400 and "your own second factor" in own.get_data(as_text=True)
    types = [e.event_type for e in services.store.load("staff:admin@example.org")]
    assert "staff.two_factor_reset" not in types


def test_a_researcher_cannot_reset_anyones_second_factor(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    _with_a_second_factor(app, services, BO, "admin")
    researcher = signed_in("researcher")

    answer = post(researcher, "/console/users/reset-2fa", {"email": BO, "confirm": "yes"})

    assert answer.status_code == 403
    assert "/console/login/code" in sign_in(app.test_client(), BO, PASSWORD).headers["Location"]


def test_a_reset_admin_is_sent_to_enrol_again_under_console_require_2fa(
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
    _with_a_second_factor(app, services, BO, "admin")
    admin = app.test_client()
    staff_member(services, "admin@example.org", "admin")
    assert sign_in(admin, "admin@example.org", PASSWORD).status_code == 302
    _enrol(admin, services)

    answer = post(admin, "/console/users/reset-2fa", {"email": BO, "confirm": "yes"})

    assert answer.status_code == 302
    bo = app.test_client()
    assert sign_in(bo, BO, PASSWORD).status_code == 302
    sent = get(bo, "/console/participants")
    assert sent.status_code == 302 and sent.headers["Location"].endswith("/console/two-factor")
