"""POST /conversation/participants/{id}/withdraw and `tandem withdraw`: contact and timers stop,
the data stays readable, and who asked and why is recorded."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.channel import outbound
from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.store.event_store import EventStore
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import participant_stream
from bot.store.schema import outbox, timers
from tests.conftest import TEST_MASTER_KEY
from tests.web.researcher import AUTH, BASE, enroll, event_types, events_of


def _prepared(client: FlaskClient, store: EventStore, clock: FakeClock) -> dict:
    participant = enroll(client)
    stream = participant_stream(participant["id"])
    timer = TimerScheduled(timer_id="t-1", kind="daily", due_at=clock.now())
    row = {"channel": participant["channel"], "phone": participant["phone_number"]}
    (queued,) = outbound.to_participant(row, "your daily prompt", kind="prompt")
    store.append(stream, [timer, queued])
    return participant


def _withdraw(client: FlaskClient, participant_id: str, **body: str):  # noqa: ANN202
    payload = {"reason": "moving abroad", "requested_by": "participant", **body}
    return client.post(f"{BASE}/{participant_id}/withdraw", json=payload, headers=AUTH)


def test_withdrawal_stops_contact_and_timers_and_records_who_and_why(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = _prepared(client, store, clock)

    answer = _withdraw(client, participant["id"])

    assert answer.status_code == 200
    assert answer.get_json()["result"]["status"] == "withdrawn"
    assert event_types(store, participant["id"])[-3:] == [
        "message.suppressed",
        "timer.cancelled",
        "participant.withdrawn",
    ]
    [withdrawn] = events_of(store, participant["id"], "participant.withdrawn")
    assert (withdrawn.data.reason, withdrawn.data.requested_by) == ("moving abroad", "participant")
    assert withdrawn.meta["actor"].startswith("api:")
    with store.reading() as conn:
        assert set(conn.execute(select(outbox.c.status)).scalars()) == {"suppressed"}
        assert set(conn.execute(select(timers.c.status)).scalars()) == {"cancelled"}


def test_a_withdrawn_participants_data_stays_readable(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = _prepared(client, store, clock)
    _withdraw(client, participant["id"])

    shown = client.get(f"{BASE}/{participant['id']}", headers=AUTH).get_json()["result"]
    messages = client.get(f"{BASE}/{participant['id']}/messages", headers=AUTH).get_json()

    assert shown["phone_number"] == "+14155552671"
    assert [m["text"] for m in messages["result"]][-1] == "your daily prompt"


def test_a_second_withdrawal_is_a_409_that_records_nothing(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    participant = _prepared(client, store, clock)
    _withdraw(client, participant["id"])
    before = event_types(store, participant["id"])

    again = _withdraw(client, participant["id"])

    assert again.status_code == 409
    assert "already withdrawn" in again.get_json()["message"]
    assert event_types(store, participant["id"]) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [({"reason": ""}, "reason"), ({"requested_by": "someone"}, "requested_by")],
)
def test_a_withdrawal_without_who_or_why_is_a_400(
    client: FlaskClient, store: EventStore, clock: FakeClock, body: dict, field: str
) -> None:
    participant = _prepared(client, store, clock)

    answer = _withdraw(client, participant["id"], **body)

    assert answer.status_code == 400
    assert answer.get_json()["message"].startswith(field)
    assert "participant.withdrawn" not in event_types(store, participant["id"])


def test_tandem_withdraw_takes_a_phone_number_and_names_the_operator(
    client: FlaskClient, store: EventStore, clock: FakeClock, database_url: str
) -> None:
    participant = _prepared(client, store, clock)

    result = CliRunner().invoke(
        cli,
        ["withdraw", "+14155552671", "--reason", "asked by phone", "--requested-by", "researcher"],
        env={
            "DATABASE_URL": database_url,
            "DEFAULT_REGION": "US",
            "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        },
    )

    assert result.exit_code == 0, result.output
    assert f"participant {participant['id']} withdrawn" in result.output
    [withdrawn] = events_of(store, participant["id"], "participant.withdrawn")
    assert withdrawn.data.requested_by == "researcher"
    assert withdrawn.meta["actor"].startswith("cli:")


def test_tandem_withdraw_of_an_unknown_number_exits_1(database_url: str) -> None:
    result = CliRunner().invoke(
        cli,
        ["withdraw", "+14155550000", "--reason", "x", "--requested-by", "other"],
        env={
            "DATABASE_URL": database_url,
            "DEFAULT_REGION": "US",
            "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        },
    )

    assert result.exit_code == 1
    assert "PARTICIPANT: no participant has the id or phone '+14155550000'" in result.output
