"""The enrollment rules (`bot.services.enrollment.check`), the same for every entry point."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.core.config import Settings
from bot.runtime.routing import intervention_catalogue
from bot.services import enrollment
from bot.services.enrollment import Enrollment
from bot.services.refusal import Refused
from bot.store.services import Services
from tests.web.conftest import settings_for

NOBODY: Callable[[str], bool] = lambda _phone: False  # noqa: E731


@pytest.fixture
def settings() -> Settings:
    return settings_for("sqlite://", DEFAULT_REGION="US", DEFAULT_TIMEZONE="America/Toronto")


def _check(settings: Settings, asked: Enrollment, taken: Callable[[str], bool] = NOBODY):  # noqa: ANN202
    return enrollment.check(asked, settings, intervention_catalogue(), taken, "api").enrolled


def test_a_number_with_one_zone_gets_that_zone_recorded_as_inferred(settings: Settings) -> None:
    enrolled = _check(settings, Enrollment(phone="+44 20 7183 8750"))

    assert (enrolled.timezone, enrolled.timezone_source) == ("Europe/London", "inferred")


def test_a_number_with_several_zones_gets_the_default_timezone(settings: Settings) -> None:
    enrolled = _check(settings, Enrollment(phone="+61 412 345 678"))

    assert (enrolled.timezone, enrolled.timezone_source) == ("America/Toronto", "default")


def test_a_given_timezone_wins_over_the_numbers(settings: Settings) -> None:
    enrolled = _check(settings, Enrollment(phone="+442071838750", timezone="Asia/Tokyo"))

    assert (enrolled.timezone, enrolled.timezone_source) == ("Asia/Tokyo", "given")


def test_a_national_number_is_read_in_the_default_region(settings: Settings) -> None:
    assert _check(settings, Enrollment(phone="(415) 555-2671")).phone == "+14155552671"


def test_every_wrong_field_is_named_at_once(settings: Settings) -> None:
    asked = Enrollment(phone="12", channel="fax", timezone="Mars/Olympus", intervention="nope")

    with pytest.raises(Refused) as refused:
        _check(settings, asked)

    assert list(refused.value.problems) == ["phone", "channel", "timezone", "intervention"]
    assert refused.value.field == "phone" and refused.value.kind == "invalid"


def test_an_intervention_is_checked_against_the_validated_catalogue(settings: Settings) -> None:
    with pytest.raises(Refused) as refused:
        _check(settings, Enrollment(phone="+14155552671", intervention="nope"))

    assert refused.value.message == intervention_catalogue().refusal("nope")


def test_a_phone_already_enrolled_is_a_conflict(settings: Settings) -> None:
    with pytest.raises(Refused) as refused:
        _check(settings, Enrollment(phone="+14155552671"), lambda p: p == "+14155552671")

    assert refused.value.kind == "conflict"
    assert refused.value.message == enrollment.ALREADY_ENROLLED


def test_a_file_counts_its_own_earlier_rows_as_taken(services: Services) -> None:
    check = enrollment.checker(
        services.store, services.settings, intervention_catalogue(), "console"
    )
    check(Enrollment(phone="+14155552671"))

    with pytest.raises(Refused, match="already enrolled"):
        check(Enrollment(phone="(415) 555-2671"))


def test_recording_refuses_all_when_one_phone_was_enrolled_meanwhile(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    check = enrollment.checker(
        services.store, services.settings, intervention_catalogue(), "console"
    )
    first, second = check(Enrollment(phone="+14155552672")), check(Enrollment(phone="+14155552673"))
    enrolled("+14155552673")

    with pytest.raises(Refused) as refused:
        enrollment.record(services.store, [first, second], actor="test", quiet=None)

    assert refused.value.kind == "conflict"
    assert services.store.projection_row("participants", first.participant_id) is None
