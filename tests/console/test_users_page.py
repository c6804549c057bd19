"""The users page: admins add staff, change roles and disable accounts; nobody else sees it."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from flask.testing import FlaskClient

from bot.store.services import Services
from tests.console.conftest import BASE_URL, PASSWORD, get, post, sign_in, staff_member

ADMIN = "staff:admin@example.org"


def _recorded(services: Services, email: str) -> list[tuple[str, dict, str]]:
    return [
        (e.event_type, e.data.model_dump(), e.meta.get("actor"))
        for e in services.store.load(f"staff:{email}")
    ]


def test_an_admin_adds_a_user_who_signs_in_once_with_the_code_shown(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    admin = signed_in("admin")

    answer = post(admin, "/console/users", {"email": " New@Example.org ", "role": "supervisor"})

    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "no-store"
    code = re.search(r'id="one-time-code">([^<]+)<', answer.get_data(as_text=True)).group(1)
    assert _recorded(services, "new@example.org") == [
        ("staff.added", {"email": "new@example.org", "role": "supervisor", "by": ADMIN}, ADMIN)
    ]
    newcomer = app.test_client()
    assert sign_in(newcomer, "new@example.org", code).headers["Location"].endswith("/password")
    listed = get(admin, "/console/users").get_data(as_text=True)
    assert "new@example.org" in listed and "first sign-in pending" in listed
    assert code not in listed  # the code is shown once
    assert 'href="/console/users"' in get(admin, "/console/participants").get_data(as_text=True)


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"email": "not an email", "role": "admin"}, "email", "not an email address"),
        ({"email": "admin@example.org", "role": "admin"}, "email", "already has an account"),
        ({"email": "x@example.org", "role": "owner"}, "role", "role must be one of"),
    ],
)
def test_a_bad_new_user_is_refused_with_a_message_beside_the_field(
    services: Services,
    signed_in: Callable[[str], FlaskClient],
    form: dict,
    field: str,
    message: str,
) -> None:
    admin = signed_in("admin")

    answer = post(admin, "/console/users", form)

    assert answer.status_code == 400
    beside = re.search(rf'id="{field}-error">([^<]+)<', answer.get_data(as_text=True))
    assert beside is not None and message in beside.group(1)
    assert services.store.load("staff:x@example.org") == []


def test_a_role_change_ends_the_users_session_and_applies_at_their_next_sign_in(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    admin = signed_in("admin")
    staff_member(services, "ana@example.org", "researcher")
    ana = app.test_client()
    sign_in(ana, "ana@example.org", PASSWORD)
    assert get(ana, "/console/participants").status_code == 200

    answer = post(admin, "/console/users/role", {"email": "ana@example.org", "role": "supervisor"})

    assert answer.status_code == 302
    assert get(ana, "/console/participants").headers["Location"].startswith("/console/login")
    changed = _recorded(services, "ana@example.org")[-1]
    assert changed == (
        "staff.role_changed",
        {"email": "ana@example.org", "role": "supervisor", "previous": "researcher", "by": ADMIN},
        ADMIN,
    )
    assert services.store.projection_row("staff", "ana@example.org")["role"] == "supervisor"
    assert sign_in(ana, "ana@example.org", PASSWORD).status_code == 302
    assert get(ana, "/console/participants").status_code == 403


def test_a_disabled_users_session_stops_working_at_once(
    app, services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:  # noqa: ANN001
    admin = signed_in("admin")
    staff_member(services, "bo@example.org", "researcher")
    bo = app.test_client()
    sign_in(bo, "bo@example.org", PASSWORD)
    assert get(bo, "/console/participants").status_code == 200

    unconfirmed = post(admin, "/console/users/disable", {"email": "bo@example.org"})
    assert unconfirmed.status_code == 400 and "tick the box" in unconfirmed.get_data(as_text=True)
    assert get(bo, "/console/participants").status_code == 200
    answer = post(admin, "/console/users/disable", {"email": "bo@example.org", "confirm": "yes"})

    assert answer.status_code == 302
    assert get(bo, "/console/participants").headers["Location"].startswith("/console/login")
    assert sign_in(app.test_client(), "bo@example.org", PASSWORD).status_code == 401
    assert _recorded(services, "bo@example.org")[-1] == (
        "staff.disabled",
        {"email": "bo@example.org", "by": ADMIN},
        ADMIN,
    )


def test_an_admin_cannot_demote_or_disable_themselves(
    services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    admin = signed_in("admin")

    demoted = post(
        admin, "/console/users/role", {"email": "admin@example.org", "role": "researcher"}
    )
    disabled = post(
        admin, "/console/users/disable", {"email": "admin@example.org", "confirm": "yes"}
    )

    assert demoted.status_code == 400 and "your own role" in demoted.get_data(as_text=True)
    assert disabled.status_code == 400 and "your own account" in disabled.get_data(as_text=True)
    assert services.store.projection_row("staff", "admin@example.org")["role"] == "admin"
    assert get(admin, "/console/users").status_code == 200


def test_an_unknown_account_is_a_404(signed_in: Callable[[str], FlaskClient]) -> None:
    admin = signed_in("admin")

    answer = post(admin, "/console/users/role", {"email": "ghost@example.org", "role": "admin"})

    assert answer.status_code == 404 and "has no account" in answer.get_data(as_text=True)


@pytest.mark.parametrize("role", ["researcher", "supervisor"])
def test_only_admins_see_the_users_page_or_a_link_to_it(
    services: Services, signed_in: Callable[[str], FlaskClient], role: str
) -> None:
    client = signed_in(role)

    assert get(client, "/console/users").status_code == 403
    added = post(client, "/console/users", {"email": "x@example.org", "role": "admin"})
    assert added.status_code == 403
    assert services.store.load("staff:x@example.org") == []
    home = get(client, "/console/alerts").get_data(as_text=True)
    assert "/console/users" not in home


def test_a_users_form_without_the_csrf_token_changes_nothing(
    services: Services, signed_in: Callable[[str], FlaskClient]
) -> None:
    admin = signed_in("admin")
    staff_member(services, "cy@example.org", "researcher")

    forged = admin.post(
        "/console/users/disable",
        data={"email": "cy@example.org", "confirm": "yes"},
        base_url=BASE_URL,
    )

    assert forged.status_code == 403
    assert services.store.projection_row("staff", "cy@example.org")["status"] == "active"
