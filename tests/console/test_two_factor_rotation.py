"""`tandem keys rotate` re-seals the staff's TOTP secrets with the data keys: once the old
master key is retired, an enrolled authenticator still signs its owner in."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pyotp
import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import select

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.core.keys import StaffSecrets, generate_master_key
from bot.keys.rotation import rotate
from bot.runtime.bootstrap import build_services
from bot.store.schema import staff_totp
from bot.store.services import Services
from bot.web import create_app
from tests.console.conftest import PASSWORD, get, sign_in, staff_member
from tests.console.test_two_factor import _code, _enrol
from tests.web.conftest import settings_for

EMAIL = "admin@example.org"


class Deployment:
    """The web app over one database, under one master key (a process; `close` stops it)."""

    def __init__(self, database_url: str, key: str, clock: FakeClock) -> None:
        self.services: Services = build_services(
            settings_for(database_url, TANDEM_MASTER_KEY=key), clock=clock
        )
        self.app: Flask = create_app(self.services)
        self.app.testing = True

    def close(self) -> None:
        self.services.close()


@pytest.fixture
def old_key() -> str:
    return generate_master_key()


@pytest.fixture
def enrolled(database_url: str, old_key: str) -> Iterator[tuple[Deployment, pyotp.TOTP]]:
    """An admin with a second factor, enrolled under `old_key`; the deployment and their app."""
    deployment = Deployment(database_url, old_key, FakeClock())
    staff_member(deployment.services, EMAIL, "admin")
    client = deployment.app.test_client()
    assert sign_in(client, EMAIL, PASSWORD).status_code == 302
    totp = _enrol(client, deployment.services)
    yield deployment, totp
    deployment.close()


def test_a_second_factor_still_signs_in_after_rotating_and_retiring_the_old_key(
    database_url: str, old_key: str, enrolled: tuple[Deployment, pyotp.TOTP]
) -> None:
    before, totp = enrolled
    clock = before.services.clock
    before.close()  # every process stopped before a rotation (docs/operations.md)
    new_key = generate_master_key()
    env = {
        "DATABASE_URL": database_url,
        "TANDEM_MASTER_KEY": old_key,
        "TANDEM_NEW_MASTER_KEY": new_key,
    }

    result = CliRunner().invoke(cli, ["keys", "rotate"], env=env)

    assert result.exit_code == 0, result.output
    assert "1 staff TOTP secrets re-sealed" in result.output
    after = Deployment(database_url, new_key, clock)  # the old key retired: refused from now on
    try:
        clock.advance(timedelta(seconds=60))
        browser = after.app.test_client()
        asked = sign_in(browser, EMAIL, PASSWORD)
        assert asked.status_code == 302 and "/console/login/code" in asked.headers["Location"]
        assert _code(browser, totp.at(clock.now())).status_code == 302
        assert get(browser, "/console/participants").status_code == 200
    finally:
        after.close()


def test_rotating_again_leaves_a_re_sealed_secret_and_names_one_that_opens_under_neither_key(
    enrolled: tuple[Deployment, pyotp.TOTP],
) -> None:
    deployment, _ = enrolled
    store = deployment.services.store
    staff_member(deployment.services, "lost@example.org", "researcher")
    elsewhere = StaffSecrets.for_master_key(generate_master_key())
    with store.transaction() as tx:  # a secret sealed under a key retired without a rotation
        tx.conn.execute(
            staff_totp.insert().values(
                email="lost@example.org",
                sealed=elsewhere.seal("lost@example.org", "JBSWY3DPEHPK3PXP"),
                enabled=True,
                last_step=0,
                updated_at=deployment.services.clock.now(),
            )
        )
    new_key = generate_master_key()

    first = rotate(store, new_key)
    with store.reading() as conn:
        sealed = conn.execute(select(staff_totp.c.sealed).where(staff_totp.c.email == EMAIL))
        resealed = sealed.scalar_one()
    again = rotate(store, new_key)  # interrupted and run again: nothing left to do

    assert (first.staff_secrets, first.unopened) == (1, ["lost@example.org"])
    assert (again.staff_secrets, again.unopened) == (0, ["lost@example.org"])
    with store.reading() as conn:
        sealed = conn.execute(select(staff_totp.c.sealed).where(staff_totp.c.email == EMAIL))
        assert sealed.scalar_one() == resealed
