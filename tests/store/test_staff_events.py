"""Staff events round-trip through their stored form; a second factor's reset names who."""

from __future__ import annotations

from bot.store.event_types.staff import StaffTwoFactorReset
from bot.store.events import decode, encode
from bot.store.personal import personal_fields


def test_a_second_factor_reset_round_trips_through_its_stored_form() -> None:
    reset = StaffTwoFactorReset(email="bo@example.org", by="staff:admin@example.org")

    assert decode("staff.two_factor_reset", 1, encode(reset)) == reset
    assert personal_fields(StaffTwoFactorReset) == set()
    assert StaffTwoFactorReset.plain == {"email", "by"}
