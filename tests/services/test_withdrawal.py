"""Withdrawing (`bot.services.withdrawal`): contact, timers and a takeover stop; data stays."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bot.channel import outbound
from bot.services import takeover, withdrawal
from bot.services.refusal import Refused
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import participant_stream
from bot.store.services import Services


def _withdraw(services: Services, pid: str, reason: str = "moved abroad", by: str = "participant"):  # noqa: ANN202
    return withdrawal.withdraw(
        services.store,
        pid,
        reason=reason,
        requested_by=by,
        actor="staff:a@example.org",
        now=services.clock.now(),
    )


def test_unsent_messages_and_pending_timers_are_stopped(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    row = services.store.projection_row("participants", pid)
    timer = TimerScheduled(timer_id="t-1", kind="daily", due_at=services.clock.now())
    services.store.append(
        participant_stream(pid), [timer, *outbound.to_participant(row, "hi", kind="prompt")]
    )

    # Enrolled at 04:00 in Los Angeles (the fake clock's 12:00 UTC): the welcome waits for the
    # end of quiet hours as a `greeting` timer, which the withdrawal cancels with the other.
    kinds = [
        e.data.kind  # type: ignore[attr-defined]
        for e in services.store.load(participant_stream(pid))
        if e.event_type == "timer.scheduled"
    ]
    assert sorted(kinds) == ["daily", "greeting"]

    done = _withdraw(services, pid)

    assert (done.suppressed, done.cancelled, done.takeover_ended) == (1, 2, False)
    assert done.row["status"] == "withdrawn"


def test_an_active_takeover_is_ended_by_the_staff_member_who_withdrew(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    takeover.take_over(services.store, pid, actor="staff:b@example.org")

    done = _withdraw(services, pid)

    assert done.takeover_ended
    assert services.store.projection_row("takeovers", pid)["status"] == "ended"
    last = services.store.load(participant_stream(pid))[-1]
    assert last.event_type == "takeover.ended" and last.data.by == "staff:a@example.org"


@pytest.mark.parametrize(
    ("reason", "by", "field"),
    [
        (" ", "participant", "reason"),
        ("x" * 2001, "participant", "reason"),
        ("ok", "nobody", "requested_by"),
    ],
)
def test_a_request_without_a_usable_reason_or_requester_is_invalid(
    services: Services, enrolled: Callable[[str], str], reason: str, by: str, field: str
) -> None:
    pid = enrolled("+14155552671")

    with pytest.raises(Refused) as refused:
        _withdraw(services, pid, reason, by)

    assert (refused.value.field, refused.value.kind) == (field, "invalid")
    assert services.store.projection_row("participants", pid)["status"] == "active"


def test_a_second_withdrawal_is_a_conflict_that_records_nothing(
    services: Services, enrolled: Callable[[str], str]
) -> None:
    pid = enrolled("+14155552671")
    _withdraw(services, pid)
    version = services.store.version(participant_stream(pid))

    with pytest.raises(Refused, match="already withdrawn") as refused:
        _withdraw(services, pid)

    assert refused.value.kind == "conflict"
    assert services.store.version(participant_stream(pid)) == version


def test_an_unknown_participant_is_not_found(services: Services) -> None:
    with pytest.raises(Refused) as refused:
        _withdraw(services, "00000000-0000-0000-0000-000000000000")

    assert refused.value.kind == "not_found"
