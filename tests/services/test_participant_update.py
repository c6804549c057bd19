"""Updating and unenrolling (`bot.services.participant_update`, `bot.services.unenrollment`)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.services import participant_update, unenrollment
from bot.services.refusal import Refused
from bot.store.events import participant_stream
from bot.store.services import Services


def _update(services: Services, pid: str, **given: object) -> dict:
    return participant_update.update(
        services.store, pid, given, actor="test", now=services.clock.now(), reason="test"
    )


def _unenroll(services: Services, pid: str) -> dict:
    return unenrollment.unenroll(
        services.store, pid, notice="bye", reason="test", actor="test", now=services.clock.now()
    )


def test_an_update_records_only_the_fields_that_change(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    version = services.store.version(participant_stream(pid))

    row = _update(services, pid, name="Ada", timezone="America/Los_Angeles")

    assert row["name"] == "Ada"
    [updated] = services.store.load(participant_stream(pid))[version:]
    assert updated.data.changes == {"name": "Ada"}


def test_a_status_change_is_recorded_with_its_reason(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")

    assert _update(services, pid, status="paused")["status"] == "paused"


def test_unenrolling_queues_the_notice_and_a_second_time_finds_nobody(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")

    assert _unenroll(services, pid)["status"] == "unenrolled"
    types = [e.event_type for e in services.store.load(participant_stream(pid))]
    assert types[-2:] == ["message.queued", "participant.unenrolled"]
    with pytest.raises(Refused, match="no longer enrolled") as again:
        _unenroll(services, pid)
    assert again.value.kind == "not_found"


def test_an_unenrolled_participant_cannot_be_updated(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    _unenroll(services, pid)

    with pytest.raises(Refused, match="no longer enrolled"):
        _update(services, pid, name="Ada")


def test_a_change_made_on_a_stale_picture_is_refused(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    version = services.store.version(participant_stream(pid))
    _update(services, pid, name="Bo")

    with pytest.raises(Refused, match="changed since this page was drawn") as refused:
        participant_update.update(
            services.store,
            pid,
            {"name": "Ada"},
            actor="test",
            now=services.clock.now(),
            reason="test",
            expected_version=version,
        )

    assert refused.value.kind == "conflict"
    assert services.store.projection_row("participants", pid)["name"] == "Bo"


def test_leave_withdrawn_refuses_to_resume_a_withdrawn_participant(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    _update(services, pid, status="withdrawn")

    with pytest.raises(Refused, match="is withdrawn; nothing was applied"):
        participant_update.update(
            services.store,
            pid,
            {"status": "active"},
            actor="test",
            now=services.clock.now(),
            reason="test",
            leave_withdrawn=True,
        )
