"""STOP, START and HELP on the inbound webhook: consent events, the help text, no work items."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask.testing import FlaskClient

from bot.store.event_types.timers import TimerCancelled, TimerScheduled
from bot.store.events import participant_stream
from bot.store.services import Services
from bot.timers import lifecycle
from tests.web.twilio_requests import INBOUND, PHONE, client_with, enroll, message, post, rows

HELP_TEXT = "Study line. Reply STOP to stop. Questions: study@example.org"


@pytest.fixture
def participant(services: Services) -> dict:
    return enroll(services)


def current(services: Services, participant_id: str) -> dict:
    return rows(services.store, "participants", participant_id=participant_id)[0]


def events_of(services: Services, participant: dict) -> list:
    return services.store.load(participant_stream(participant["participant_id"]))


def inbound_work(services: Services) -> list[dict]:
    return rows(services.store, "work_items", kind="inbound")


def test_stop_opts_the_participant_out_and_creates_no_work(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    assert post(client, INBOUND, message("Stop")).status_code == 200

    *_, received, opted_out = events_of(services, participant)
    assert (received.event_type, received.data.keyword) == ("message.received", "STOP")
    assert opted_out.event_type == "participant.opted_out"
    assert (opted_out.data.source, opted_out.data.keyword) == ("keyword", "STOP")
    assert current(services, participant["participant_id"])["opted_out"] is True
    assert inbound_work(services) == []


def test_stop_cancels_pending_timers_in_the_same_append(
    client: FlaskClient,
    services: Services,
    participant: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bot.timers.lifecycle is another feature's; a stand-in shows what it returns is appended with
    # the opt-out and that it is handed the participant's pending timers.
    timer = TimerScheduled(
        timer_id="t-1", kind="prompt", due_at=services.clock.now() + timedelta(hours=2)
    )
    services.store.append(participant_stream(participant["participant_id"]), [timer])
    calls = []

    def on_status_change(row, pending, change, now):  # noqa: ANN001, ANN202
        calls.append((row["participant_id"], [t["timer_id"] for t in pending], change, now))
        return [TimerCancelled(timer_id=t["timer_id"], reason=change) for t in pending]

    monkeypatch.setattr(lifecycle, "on_status_change", on_status_change)

    post(client, INBOUND, message("STOP"))

    pid = participant["participant_id"]
    assert calls == [(pid, ["t-1"], "opted_out", services.clock.now())]
    *_, received, opted_out, cancelled = events_of(services, participant)
    assert [received.event_type, opted_out.event_type, cancelled.event_type] == [
        "message.received",
        "participant.opted_out",
        "timer.cancelled",
    ]
    assert received.recorded_at == cancelled.recorded_at  # one transaction
    assert rows(services.store, "timers")[0]["status"] == "cancelled"


def test_start_opts_an_opted_out_participant_back_in(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("STOP"))

    post(client, INBOUND, message("start"))

    *_, received, opted_in = events_of(services, participant)
    assert received.data.keyword == "START"
    assert (opted_in.event_type, opted_in.data.source) == ("participant.opted_in", "keyword")
    assert current(services, participant["participant_id"])["opted_out"] is False
    assert inbound_work(services) == []


def test_start_hands_lifecycle_the_participants_history(
    client: FlaskClient,
    services: Services,
    participant: dict,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With the stream, lifecycle re-arms schedules left without a pending occurrence.
    post(client, INBOUND, message("STOP"))
    calls = []

    def on_status_change(row, pending, change, now, events=None):  # noqa: ANN001, ANN202
        calls.append((change, [e.event_type for e in events or ()]))
        return []

    monkeypatch.setattr(lifecycle, "on_status_change", on_status_change)

    post(client, INBOUND, message("START"))

    assert calls == [
        ("opted_in", ["participant.enrolled", "message.received", "participant.opted_out"])
    ]


def test_yes_from_a_participant_who_did_not_opt_out_is_an_ordinary_message(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("Yes"))

    *_, received = events_of(services, participant)
    assert (received.event_type, received.data.keyword) == ("message.received", None)
    assert len(inbound_work(services)) == 1


def test_help_queues_the_help_text_and_creates_no_work(
    services: Services, participant: dict
) -> None:
    client = client_with(services, HELP_TEXT=HELP_TEXT)

    post(client, INBOUND, message("HELP"))

    *_, received, queued = events_of(services, participant)
    assert (received.data.keyword, queued.event_type) == ("HELP", "message.queued")
    [row] = rows(services.store, "outbox")
    assert (row["kind"], row["body"], row["to_address"]) == ("help", HELP_TEXT, PHONE)
    assert inbound_work(services) == []


def test_help_is_answered_on_the_channel_it_came_on(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("info", sender=f"whatsapp:{PHONE}"))

    [row] = rows(services.store, "outbox")
    assert (row["channel"], row["to_address"]) == ("whatsapp", f"whatsapp:{PHONE}")


@pytest.mark.parametrize("body", ["please don't stop", "STOP PLEASE", "stop it, I love these"])
def test_a_keyword_inside_a_sentence_is_an_ordinary_message(
    client: FlaskClient, services: Services, participant: dict, body: str
) -> None:
    post(client, INBOUND, message(body))

    *_, received = events_of(services, participant)
    assert (received.event_type, received.data.keyword) == ("message.received", None)
    assert current(services, participant["participant_id"])["opted_out"] is False
    assert len(inbound_work(services)) == 1


def test_stop_on_whatsapp_opts_out_the_same_participant_on_sms(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    assert participant["channel"] == "sms"

    post(client, INBOUND, message("STOP", sender=f"whatsapp:{PHONE}", to="whatsapp:+15005550123"))

    [row] = rows(services.store, "participants")  # no second participant for the WhatsApp address
    assert row["participant_id"] == participant["participant_id"]
    assert row["opted_out"] is True


def test_stop_to_another_of_our_numbers_opts_out_the_same_participant(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("unsubscribe", to="+15005550123"))

    assert current(services, participant["participant_id"])["opted_out"] is True


def test_twilios_opt_out_type_counts_even_for_a_custom_keyword(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("PARAR", OptOutType="STOP"))

    *_, received, opted_out = events_of(services, participant)
    assert received.data.keyword == "STOP"
    assert opted_out.data.source == "opt_out_type"


def test_a_second_stop_records_the_message_but_no_second_opt_out(
    client: FlaskClient, services: Services, participant: dict
) -> None:
    post(client, INBOUND, message("STOP"))
    post(client, INBOUND, message("STOP"))

    kinds = [e.event_type for e in events_of(services, participant)]
    assert kinds.count("message.received") == 2
    assert kinds.count("participant.opted_out") == 1
