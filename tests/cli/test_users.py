"""`tandem users add|list|disable|reset-2fa`: accounts of the researcher console from the
command line."""

from __future__ import annotations

import re

from bot.console import accounts
from bot.store import staff_totp
from bot.store.event_store import EventStore
from tests.cli.test_store_commands import tandem


def test_users_add_prints_a_code_that_signs_in_once_and_list_and_disable_show_the_account(
    store: EventStore, database_url: str
) -> None:
    added = tandem("users", "add", "Eve@Example.org", "--role", "supervisor", url=database_url)
    assert added.returncode == 0, added.stderr
    code = re.search(r"valid 7 days\): (\S+)", added.stdout).group(1)
    signed = accounts.sign_in(store, "eve@example.org", code, store.clock.now())
    assert signed is not None and signed.must_set_password and signed.role == "supervisor"

    listed = tandem("users", "list", url=database_url)
    assert "eve@example.org\tsupervisor\tactive\tfirst sign-in pending" in listed.stdout

    assert tandem("users", "disable", "eve@example.org", url=database_url).returncode == 0
    assert (
        "eve@example.org\tsupervisor\tdisabled" in tandem("users", "list", url=database_url).stdout
    )
    assert accounts.sign_in(store, "eve@example.org", code, store.clock.now()) is None


def test_users_add_refuses_a_bad_email_a_bad_role_and_a_second_account(
    database_url: str,
) -> None:
    bad_email = tandem("users", "add", "not-an-email", "--role", "admin", url=database_url)
    bad_role = tandem("users", "add", "a@example.org", "--role", "owner", url=database_url)
    first = tandem("users", "add", "a@example.org", "--role", "admin", url=database_url)
    again = tandem("users", "add", "A@example.org", "--role", "admin", url=database_url)

    assert bad_email.returncode == 1 and "not an email address" in bad_email.stderr
    assert bad_role.returncode == 2 and "owner" in bad_role.stderr
    assert first.returncode == 0
    assert again.returncode == 1 and "already has an account" in again.stderr


def test_users_reset_2fa_clears_a_second_factor_records_who_and_refuses_an_unknown_account(
    store: EventStore, database_url: str
) -> None:
    now = store.clock.now()
    accounts.add(store, "ida@example.org", "admin", by="cli", now=now)
    staff_totp.start(store, "ida@example.org", "sealed-secret", now)
    assert staff_totp.use_step(store, "ida@example.org", 1, enable=True, now=now)

    unknown = tandem("users", "reset-2fa", "ghost@example.org", url=database_url)
    reset = tandem("users", "reset-2fa", "Ida@Example.org", url=database_url)
    again = tandem("users", "reset-2fa", "ida@example.org", url=database_url)

    assert unknown.returncode == 1 and "ghost@example.org has no account" in unknown.stderr
    assert reset.returncode == 0, reset.stderr
    assert "reset the second factor of ida@example.org" in reset.stdout
    assert staff_totp.find(store, "ida@example.org") is None
    last = store.load("staff:ida@example.org")[-1]
    assert (last.event_type, last.data.by, last.meta["actor"]) == (
        "staff.two_factor_reset",
        "cli",
        "cli",
    )
    assert again.returncode == 0 and "has no second factor: nothing to reset" in again.stdout
    assert [e.event_type for e in store.load("staff:ida@example.org")].count(
        "staff.two_factor_reset"
    ) == 1
    shown = tandem("users", "reset-2fa", "--help", url=database_url)
    assert "Clear the account's second factor (TOTP)" in shown.stdout
