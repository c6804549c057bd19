"""GET: the participant list (paging, status filter), one participant, transcript and events."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask.testing import FlaskClient

from bot.channel import outbound
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types import (
    MessageFailed,
    MessageReceived,
    MessageSent,
    MessageStatus,
    MessageSuppressed,
)
from bot.store.event_types.messages import Media
from bot.store.events import participant_stream
from tests.web.researcher import AUTH, BASE, enroll

PHONES = ["+14155552671", "+442071838750", "+919876543210", "+16135550123", "+33142685300"]


def get(client: FlaskClient, path: str, **query: Any) -> Any:
    return client.get(f"{BASE}{path}", query_string=query, headers=AUTH)


def enroll_many(client: FlaskClient, clock: FakeClock, count: int) -> list[str]:
    ids = []
    for phone in PHONES[:count]:
        ids.append(enroll(client, phone=phone)["id"])
        clock.advance(timedelta(minutes=1))
    return ids


def test_the_list_shows_participants_in_order_of_enrollment(
    client: FlaskClient, clock: FakeClock
) -> None:
    ids = enroll_many(client, clock, 3)
    body = get(client, "").get_json()
    assert [p["id"] for p in body["result"]] == ids
    assert body["page"] == {
        "limit": 50,
        "offset": 0,
        "total": 3,
        "next_offset": None,
        "more": False,
        "next": None,
    }
    assert "message" not in body


def test_the_list_pages_with_limit_and_offset(client: FlaskClient, clock: FakeClock) -> None:
    ids = enroll_many(client, clock, 5)
    first = get(client, "", limit=2).get_json()
    assert [p["id"] for p in first["result"]] == ids[:2]
    assert first["page"]["next_offset"] == 2
    assert first["page"]["more"] is True
    assert first["page"]["next"] == "/conversation/participants?limit=2&offset=2"
    assert first["message"] == (
        "2 of 5 participants (from 1); more at /conversation/participants?limit=2&offset=2"
        " (limit up to 1000)"
    )
    second = client.get(first["page"]["next"], headers=AUTH).get_json()
    assert [p["id"] for p in second["result"]] == ids[2:4]
    last = get(client, "", limit=2, offset=4).get_json()
    assert [p["id"] for p in last["result"]] == ids[4:]
    assert last["page"] == {
        "limit": 2,
        "offset": 4,
        "total": 5,
        "next_offset": None,
        "more": False,
        "next": None,
    }
    assert get(client, "", offset=1000).get_json()["result"] == []


def test_the_list_filters_by_status_and_hides_the_unenrolled_by_default(
    client: FlaskClient, clock: FakeClock
) -> None:
    active, paused, gone = enroll_many(client, clock, 3)
    client.put(f"{BASE}/{paused}", json={"status": "paused"}, headers=AUTH)
    client.delete(f"{BASE}/{gone}", headers=AUTH)

    def listed(**query: Any) -> list[str]:
        return [p["id"] for p in get(client, "", **query).get_json()["result"]]

    assert listed() == [active, paused]
    assert listed(status="paused") == [paused]
    assert listed(status="unenrolled") == [gone]
    assert listed(status="completed") == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"offset": -1}, "offset"),
        ({"offset": 10**30}, "offset"),
        ({"status": "sleeping"}, "status"),
        ({"status": ""}, "status"),
        ({"sort": "name"}, "sort"),
    ],
)
def test_list_parameters_out_of_bounds_are_400s_naming_them(
    client: FlaskClient, query: dict[str, Any], field: str
) -> None:
    response = get(client, "", **query)
    assert response.status_code == 400
    assert response.get_json()["message"].startswith(f"{field}: ")


def test_one_participant_is_shown_by_id(client: FlaskClient) -> None:
    participant = enroll(client, name="Ana", timezone="Asia/Kolkata")
    body = get(client, f"/{participant['id']}").get_json()
    assert body["status"] == "ok"
    assert body["result"] == participant
    assert "message" not in body


@pytest.mark.parametrize(
    "participant_id",
    ["1b4e28ba-2fa1-11d2-883f-0016d3cca427", "p_0123456789abcdef", "x" * 5000, "%00", "..%2f.."],
)
@pytest.mark.parametrize("suffix", ["", "/messages", "/events"])
def test_an_unknown_or_malformed_id_is_a_404(
    client: FlaskClient, participant_id: str, suffix: str
) -> None:
    response = get(client, f"/{participant_id}{suffix}")
    assert response.status_code == 404
    assert response.get_json()["status"] == "error"


def conversation(store: EventStore, participant: dict[str, Any], clock: FakeClock) -> list[str]:
    """An inbound message, a delivered reply, a failed prompt, a supervisor alert."""
    stream = participant_stream(participant["id"])
    row = {"channel": "sms", "phone": participant["phone_number"]}
    inbound = MessageReceived(
        message_sid="SM" + "1" * 32,
        from_address=participant["phone_number"],
        to_address="+15005550006",
        channel="sms",
        body="hi there",
        media=[Media(url="https://example.org/cat.jpg", content_type="image/jpeg")],
    )
    (reply,) = outbound.to_participant(row, "Hello! " * 30)
    (prompt,) = outbound.to_participant(row, "Walk 5 minutes?", kind="prompt")
    (alert,) = outbound.to_address("+15550001111", "sms", "crisis words", "alert")
    store.append(stream, [inbound])
    clock.advance(timedelta(seconds=5))
    store.append(stream, [reply, prompt, alert])
    clock.advance(timedelta(seconds=5))
    store.append(
        stream,
        [
            MessageSent(outbox_id=reply.outbox_id, provider_sid="SM" + "2" * 32, segments=2),
            MessageStatus(
                provider_sid="SM" + "2" * 32, status="delivered", outbox_id=reply.outbox_id
            ),
            MessageFailed(outbox_id=prompt.outbox_id, error_code=30007, error_message="filtered"),
            MessageSuppressed(outbox_id=alert.outbox_id, reason="test"),
        ],
    )
    return [inbound.message_sid, reply.outbox_id, prompt.outbox_id]


def test_the_transcript_shows_both_directions_with_status_errors_and_segments(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = enroll(client, timezone="Asia/Kolkata")
    inbound_id, reply_id, prompt_id = conversation(store, participant, clock)
    body = get(client, f"/{participant['id']}/messages").get_json()
    lines = body["result"]
    assert [m["message_id"] for m in lines] == [inbound_id, reply_id, prompt_id]
    inbound, reply, prompt = lines
    assert (inbound["direction"], inbound["text"], inbound["status"]) == (
        "inbound",
        "hi there",
        "received",
    )
    assert inbound["media"] == ["https://example.org/cat.jpg"]
    assert inbound["created_at"] == "2026-01-05T12:00:00Z"
    assert inbound["created_at_local"] == "2026-01-05T17:30:00+05:30"
    assert (reply["direction"], reply["kind"], reply["status"], reply["segments"]) == (
        "outbound",
        "reply",
        "delivered",
        2,
    )
    assert reply["sent_at"] == "2026-01-05T12:00:10Z"
    assert (prompt["status"], prompt["error_code"], prompt["error_message"]) == (
        "failed",
        30007,
        "filtered",
    )
    assert prompt["segments"] == 1  # counted from the text: Twilio reported none
    assert body["page"]["next_after"] is None


def test_the_transcript_pages_with_a_cursor(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = enroll(client)
    expected = conversation(store, participant, clock)
    seen: list[str] = []
    after = 0
    for _page in range(5):
        body = get(client, f"/{participant['id']}/messages", limit=2, after=after).get_json()
        seen += [m["message_id"] for m in body["result"]]
        if body["page"]["next_after"] is None:
            break
        after = body["page"]["next_after"]
    assert seen == expected


def test_the_event_stream_is_returned_raw_and_paged(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = enroll(client)
    conversation(store, participant, clock)
    first = get(client, f"/{participant['id']}/events", limit=3).get_json()
    assert [e["type"] for e in first["result"]] == [
        "participant.enrolled",
        "message.received",
        "message.queued",
    ]
    assert first["result"][0]["data"]["phone"] == participant["phone_number"]
    assert [e["stream_version"] for e in first["result"]] == [1, 2, 3]
    rest = get(
        client, f"/{participant['id']}/events", after=first["page"]["next_after"], limit=1000
    ).get_json()
    assert len(rest["result"]) == 9 - 3
    assert rest["page"]["next_after"] is None


@pytest.mark.parametrize(
    ("query", "field"),
    [({"after": -1}, "after"), ({"after": 2**60}, "after"), ({"limit": 1001}, "limit")],
)
@pytest.mark.parametrize("suffix", ["/messages", "/events"])
def test_cursor_parameters_out_of_bounds_are_400s(
    client: FlaskClient, query: dict[str, Any], field: str, suffix: str
) -> None:
    participant = enroll(client)
    response = get(client, f"/{participant['id']}{suffix}", **query)
    assert response.status_code == 400
    assert response.get_json()["message"].startswith(f"{field}: ")


def test_a_page_may_hold_up_to_1000_participants(client: FlaskClient, clock: FakeClock) -> None:
    ids = enroll_many(client, clock, 3)
    body = get(client, "", limit=1000).get_json()
    assert [p["id"] for p in body["result"]] == ids
    assert (body["page"]["limit"], body["page"]["more"]) == (1000, False)
