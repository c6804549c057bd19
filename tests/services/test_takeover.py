"""Take over, hand back and write as staff (`bot.services.takeover`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import time
from zoneinfo import ZoneInfo

import pytest

from bot.core.localtime import QuietHours
from bot.services import takeover
from bot.services.refusal import Refused
from bot.store.services import Services

STAFF = "staff:a@example.org"


def _send(services: Services, pid: str, quiet: QuietHours | None = None, token: str = "f1"):  # noqa: ANN202
    return takeover.send_as_staff(
        services.store,
        pid,
        "hello from the team",
        actor=STAFF,
        form_token=token,
        now=services.clock.now(),
        default_quiet_hours=quiet,
        quiet_hours_by_intervention={},
    )


def test_a_second_take_over_names_who_holds_it(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    takeover.take_over(services.store, pid, actor=STAFF)

    with pytest.raises(Refused, match=f"Already taken over by {STAFF}"):
        takeover.take_over(services.store, pid, actor="staff:b@example.org")


def test_handing_back_what_the_bot_holds_is_refused(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")

    with pytest.raises(Refused, match="nothing to hand back"):
        takeover.hand_back(services.store, pid, actor=STAFF)


def test_a_staff_message_needs_a_takeover(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")

    with pytest.raises(Refused, match="Take the conversation over"):
        _send(services, pid)


def test_a_staff_message_is_queued_once_per_form(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    takeover.take_over(services.store, pid, actor=STAFF)
    version = _send(services, pid)["version"]

    assert _send(services, pid)["version"] == version  # the same form sent again
    assert _send(services, pid, token="f2")["version"] > version


def test_a_staff_message_inside_quiet_hours_is_not_queued(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    takeover.take_over(services.store, pid, actor=STAFF)
    local = services.clock.now().astimezone(ZoneInfo("America/Los_Angeles"))  # a +1 415 number
    this_hour = QuietHours(start=time(local.hour), end=time((local.hour + 1) % 24))

    with pytest.raises(Refused, match="inside their quiet hours"):
        _send(services, pid, this_hour)
