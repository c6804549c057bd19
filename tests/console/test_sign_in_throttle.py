"""Sign-in throttling: per account and address with growing delays, per address for spraying,
proxy-aware only when told, and counted atomically under concurrent guesses."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from threading import Lock

import pytest
from flask.testing import FlaskClient

from bot.console import accounts
from bot.runtime.bootstrap import build_services
from bot.store.login_throttle import ADDRESS, PAIR
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import BASE_URL, MASTER_KEY, PASSWORD, csrf_of, staff_member
from tests.web.conftest import settings_for

ATTACKER = "203.0.113.7"
OWNER = "198.51.100.20"


def _try(client: FlaskClient, email: str, secret: str, address: str, **headers: str) -> int:
    environ = {"REMOTE_ADDR": address}
    page = client.get("/console/login", base_url=BASE_URL, environ_base=environ)
    response = client.post(
        "/console/login",
        data={"email": email, "password": secret, "csrf_token": csrf_of(page.get_data(True))},
        base_url=BASE_URL,
        environ_base=environ,
        headers=headers,
    )
    return response.status_code


def test_the_owner_signs_in_from_another_address_while_the_attackers_is_locked(
    app, services: Services
) -> None:
    staff_member(services, "ann@example.org", "admin")
    for _ in range(PAIR.free):
        assert _try(app.test_client(), "ann@example.org", "guess", ATTACKER) == 401

    assert _try(app.test_client(), "ann@example.org", PASSWORD, ATTACKER) == 429
    assert _try(app.test_client(), "ann@example.org", PASSWORD, OWNER) == 302


def test_each_lock_of_the_same_pair_lasts_longer_than_the_one_before(
    app, services: Services
) -> None:
    staff_member(services, "ben@example.org", "admin")
    for _ in range(PAIR.free):
        assert _try(app.test_client(), "ben@example.org", "guess", ATTACKER) == 401
    waits = []
    for _ in range(3):
        waited = timedelta(0)
        while _try(app.test_client(), "ben@example.org", "guess", ATTACKER) == 429:
            services.clock.advance(timedelta(seconds=30))
            waited += timedelta(seconds=30)
        waits.append(waited)

    assert waits[0] < waits[1] < waits[2]
    assert waits[0] >= PAIR.delays[0]


def test_one_address_trying_many_accounts_is_slowed(app, services: Services) -> None:
    for n in range(ADDRESS.free):
        assert _try(app.test_client(), f"nobody{n}@example.org", "guess", ATTACKER) == 401

    assert _try(app.test_client(), "another@example.org", "guess", ATTACKER) == 429
    assert _try(app.test_client(), "another@example.org", "guess", OWNER) == 401


def test_a_right_password_forgets_the_pairs_failures(app, services: Services) -> None:
    staff_member(services, "cat@example.org", "admin")
    for _ in range(PAIR.free - 1):
        assert _try(app.test_client(), "cat@example.org", "guess", OWNER) == 401
    assert _try(app.test_client(), "cat@example.org", PASSWORD, OWNER) == 302

    for _ in range(PAIR.free):
        assert _try(app.test_client(), "cat@example.org", "guess", OWNER) == 401


def test_x_forwarded_for_is_believed_only_behind_the_configured_proxies(
    database_url: str,
    store,
    clock,
    app,
    services: Services,  # noqa: ANN001
) -> None:
    staff_member(services, "dan@example.org", "admin")
    behind = create_app(
        build_services(
            settings_for(database_url, TANDEM_MASTER_KEY=MASTER_KEY, TRUSTED_PROXY_COUNT="1"),
            clock=clock,
            store=store,
        )
    )
    proxy = "10.0.0.2"
    for _ in range(PAIR.free):  # the attacker, through the proxy
        code = _try(
            behind.test_client(), "dan@example.org", "guess", proxy, **{"X-Forwarded-For": ATTACKER}
        )
        assert code == 401
    # Behind the proxy the owner is told apart by the header; a forged entry left of the
    # proxy's own changes nothing.
    assert (
        _try(
            behind.test_client(),
            "dan@example.org",
            PASSWORD,
            proxy,
            **{"X-Forwarded-For": f"{OWNER}, {ATTACKER}"},
        )
        == 429
    )
    assert (
        _try(behind.test_client(), "dan@example.org", PASSWORD, proxy, **{"X-Forwarded-For": OWNER})
        == 302
    )
    # Without the setting the header is not believed: every request is the proxy's address.
    for n in range(PAIR.free):
        assert (
            _try(
                app.test_client(),
                "dan@example.org",
                "guess",
                proxy,
                **{"X-Forwarded-For": f"192.0.2.{n}"},
            )
            == 401
        )
    assert (
        _try(app.test_client(), "dan@example.org", PASSWORD, proxy, **{"X-Forwarded-For": OWNER})
        == 429
    )


def test_forty_parallel_wrong_passwords_check_at_most_the_limit(
    app, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    staff_member(services, "eve@example.org", "admin")
    checked = 0
    lock = Lock()
    real = accounts.sign_in

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        nonlocal checked
        with lock:
            checked += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(accounts, "sign_in", counting)
    with ThreadPoolExecutor(max_workers=40) as pool:
        codes = list(
            pool.map(
                lambda _: _try(app.test_client(), "eve@example.org", "guess", ATTACKER),
                range(40),
            )
        )

    assert checked == PAIR.free
    assert codes.count(401) == checked and codes.count(429) == 40 - checked
