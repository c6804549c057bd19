"""PUT and DELETE /conversation/participants/{id}: the events they record, and their refusals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.channel import outbound
from bot.core.clock import FakeClock
from bot.core.config import DEFAULT_UNREGISTER_NOTICE
from bot.store.event_store import EventStore
from bot.store.event_types import MessageSent, ParticipantOptedOut
from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.store.events import Event, EventData, participant_stream
from bot.store.schema import outbox
from bot.timers import lifecycle
from tests.web.researcher import AUTH, BASE, client_with, enroll, event_types, events_of


class RecordingHook:
    """Stands in for the timers engineer's hook: cancels every pending timer it is shown."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], list[str], str]] = []
        self.streams: list[list[str]] = []

    def __call__(
        self,
        participant: Mapping[str, Any],
        pending_timers: list[Mapping[str, Any]],
        change: str,
        now: datetime,
        events: Sequence[Event] | None = None,
    ) -> list[EventData]:
        ids = [t["timer_id"] for t in pending_timers]
        self.calls.append((dict(participant), ids, change))
        self.streams.append([e.event_type for e in events or ()])
        return [TimerCancelled(timer_id=i, reason=change) for i in ids]


@pytest.fixture
def hook(monkeypatch: pytest.MonkeyPatch) -> RecordingHook:
    recording = RecordingHook()
    monkeypatch.setattr(lifecycle, "on_status_change", recording)
    return recording


def schedule_timer(store: EventStore, participant_id: str, clock: FakeClock) -> str:
    timer = TimerScheduled(timer_id=f"t-{participant_id[:8]}", kind="daily", due_at=clock.now())
    store.append(participant_stream(participant_id), [timer])
    return timer.timer_id


def queue(store: EventStore, participant: dict[str, Any], body: str) -> str:
    row = {"channel": participant["channel"], "phone": participant["phone_number"]}
    (queued,) = outbound.to_participant(row, body, kind="prompt")
    store.append(participant_stream(participant["id"]), [queued])
    return queued.outbox_id


def put(client: FlaskClient, participant_id: str, body: Any) -> Any:
    return client.put(f"{BASE}/{participant_id}", json=body, headers=AUTH)


def test_put_records_only_the_fields_that_changed(client: FlaskClient, store: EventStore) -> None:
    participant = enroll(client, name="Ana", gender="f")
    response = put(client, participant["id"], {"name": "Bo", "gender": "f", "debug": True})
    assert response.status_code == 200
    assert response.get_json()["message"] == "Participant updated successfully"
    assert response.get_json()["result"]["name"] == "Bo"
    (updated,) = events_of(store, participant["id"], "participant.updated")
    assert updated.data.changes == {"name": "Bo", "debug": True}


def test_put_with_nothing_new_records_no_event(client: FlaskClient, store: EventStore) -> None:
    participant = enroll(client, name="Ana")
    assert put(client, participant["id"], {"name": "Ana", "status": "active"}).status_code == 200
    assert put(client, participant["id"], {}).status_code == 200
    assert event_types(store, participant["id"]) == ["participant.enrolled"]


def test_put_clears_a_text_field_given_null_or_blank(client: FlaskClient) -> None:
    participant = enroll(client, name="Ana", background="runner")
    result = put(client, participant["id"], {"name": None, "background": "  "}).get_json()
    assert (result["result"]["name"], result["result"]["background"]) == (None, None)


def test_put_changes_the_timezone_and_returns_it(client: FlaskClient) -> None:
    participant = enroll(client)
    answer = put(client, participant["id"], {"timezone": "Asia/Kolkata"}).get_json()
    assert answer["result"]["timezone"] == "Asia/Kolkata"


def test_a_status_change_records_it_with_the_hooks_events_in_one_append(
    client: FlaskClient, store: EventStore, clock: FakeClock, hook: RecordingHook
) -> None:
    participant = enroll(client)
    timer_id = schedule_timer(store, participant["id"], clock)
    response = put(client, participant["id"], {"status": "paused", "name": "Bo"})
    assert response.get_json()["result"]["status"] == "paused"
    assert event_types(store, participant["id"])[2:] == [
        "participant.updated",
        "participant.status_changed",
        "timer.cancelled",
    ]
    seen, pending, change = hook.calls[0]
    assert (seen["status"], seen["name"], pending, change) == ("paused", "Bo", [timer_id], "paused")
    assert store.projection_row("timers", timer_id)["status"] == "cancelled"


def test_resuming_calls_the_hook_with_active(client: FlaskClient, hook: RecordingHook) -> None:
    participant = enroll(client)
    put(client, participant["id"], {"status": "withdrawn"})
    put(client, participant["id"], {"status": "active"})
    assert [change for _, _, change in hook.calls] == ["withdrawn", "active"]
    # The hook sees the stream, so that a resume can re-arm the daily schedules.
    assert hook.streams[1] == ["participant.enrolled", "participant.status_changed"]


def test_unenrolling_cancels_pending_timers_through_the_real_hook(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = enroll(client)
    timer_id = schedule_timer(store, participant["id"], clock)
    client.delete(f"{BASE}/{participant['id']}", headers=AUTH)
    assert store.projection_row("timers", timer_id)["status"] == "cancelled"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("status", "unenrolled"),
        ("status", "sleeping"),
        ("status", None),
        ("timezone", None),
        ("timezone", "Nowhere/Town"),
        ("debug", None),
        ("debug", 1),
        ("intervention", None),
        ("name", 7),
        ("phone_number", "+14155552671"),
        ("channel", "telegram"),
        ("channel", None),
    ],
)
def test_put_refuses_a_wrong_field_naming_it(
    client: FlaskClient, store: EventStore, field: str, value: Any
) -> None:
    participant = enroll(client)
    response = put(client, participant["id"], {field: value})
    assert response.status_code == 400
    assert response.get_json()["message"].startswith(f"{field}: ")
    assert event_types(store, participant["id"]) == ["participant.enrolled"]


@pytest.mark.parametrize("participant_id", ["1b4e28ba-2fa1-11d2-883f-0016d3cca427", "nope"])
def test_put_and_delete_of_an_unknown_participant_are_404s(
    client: FlaskClient, participant_id: str
) -> None:
    assert put(client, participant_id, {"name": "x"}).status_code == 404
    response = client.delete(f"{BASE}/{participant_id}", headers=AUTH)
    assert response.status_code == 404
    assert response.get_json()["message"] == "participant_id: Participant not found"


def test_delete_suppresses_pending_messages_sends_the_notice_and_unenrolls(
    client: FlaskClient, store: EventStore, clock: FakeClock, hook: RecordingHook
) -> None:
    participant = enroll(client)
    timer_id = schedule_timer(store, participant["id"], clock)
    pending = queue(store, participant, "your daily prompt")
    sent = queue(store, participant, "already gone")
    store.append(
        participant_stream(participant["id"]), [MessageSent(outbox_id=sent, provider_sid="SM1")]
    )
    response = client.delete(f"{BASE}/{participant['id']}", headers=AUTH)
    assert response.status_code == 200
    assert response.get_json()["message"] == (
        "Participant unenrolled (not deleted): nothing more is sent, pending timers are "
        "cancelled, and their data is kept"
    )
    assert response.get_json()["result"]["status"] == "unenrolled"
    assert event_types(store, participant["id"])[-4:] == [
        "message.suppressed",
        "timer.cancelled",
        "message.queued",
        "participant.unenrolled",
    ]
    (suppressed,) = events_of(store, participant["id"], "message.suppressed")
    assert suppressed.data.outbox_id == pending
    assert hook.calls[0][1:] == ([timer_id], "unenrolled")
    notice = events_of(store, participant["id"], "message.queued")[-1].data
    assert (notice.kind, notice.body, notice.to_address) == (
        "notice",
        DEFAULT_UNREGISTER_NOTICE,
        "+14155552671",
    )
    with store.reading() as conn:
        statuses = dict(conn.execute(select(outbox.c.outbox_id, outbox.c.status)).all())
    assert statuses[pending] == "suppressed"
    assert statuses[sent] == "sent"
    assert statuses[notice.outbox_id] == "pending"


def test_a_second_delete_is_a_404_and_the_participant_stays_readable(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client)
    client.delete(f"{BASE}/{participant['id']}", headers=AUTH)
    again = client.delete(f"{BASE}/{participant['id']}", headers=AUTH)
    assert again.status_code == 404
    assert again.get_json()["message"] == "participant_id: Participant is no longer enrolled"
    assert put(client, participant["id"], {"name": "x"}).status_code == 404
    shown = client.get(f"{BASE}/{participant['id']}", headers=AUTH)
    assert shown.status_code == 200
    assert shown.get_json()["result"]["status"] == "unenrolled"
    assert event_types(store, participant["id"]).count("participant.unenrolled") == 1


def test_delete_sends_no_notice_to_a_participant_who_opted_out(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client)
    store.append(participant_stream(participant["id"]), [ParticipantOptedOut(source="keyword")])
    client.delete(f"{BASE}/{participant['id']}", headers=AUTH)
    assert "message.queued" not in event_types(store, participant["id"])


def test_the_unregister_notice_is_configurable_and_can_be_turned_off(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    custom = client_with(database_url, store, clock, UNREGISTER_NOTICE="Bye from the study.")
    first = enroll(custom)
    custom.delete(f"{BASE}/{first['id']}", headers=AUTH)
    assert events_of(store, first["id"], "message.queued")[0].data.body == "Bye from the study."
    silent = client_with(database_url, store, clock, UNREGISTER_NOTICE="")
    second = enroll(silent, phone="+442071838750")
    silent.delete(f"{BASE}/{second['id']}", headers=AUTH)
    assert "message.queued" not in event_types(store, second["id"])


def test_moving_a_participant_to_an_llm_intervention_without_an_llm_is_refused(
    client: FlaskClient, store: EventStore
) -> None:
    participant = enroll(client)

    answer = client.put(
        f"{BASE}/{participant['id']}", json={"intervention": "ot-mentor"}, headers=AUTH
    )

    assert answer.status_code == 400
    assert "needs an LLM — not configured" in answer.get_json()["message"]
    assert event_types(store, participant["id"]).count("participant.updated") == 0
