"""POST /conversation/participants/{id}/erase and `tandem erase`: the participant's data key is
destroyed, so that no plaintext phone, name or message of theirs is left anywhere in the
database (the raw SQLite file and its WAL; every text column on PostgreSQL), while other
participants stay readable and replay still agrees with the stored projections."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner
from flask.testing import FlaskClient
from sqlalchemy import create_engine, inspect, select, text
from sqlalchemy.engine import make_url

from bot.channel import outbound
from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.reporting.export import export
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled, ProfileSaved
from bot.store.event_types.timers import TimerScheduled
from bot.store.events import participant_stream
from bot.store.schema import outbox, timers
from bot.store.services import Services
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled
from tests.web.researcher import AUTH, BASE, enroll, event_types, events_of
from tests.web.twilio_requests import INBOUND, message, post

ERASED_PHONE, KEPT_PHONE = "+14155550101", "+14155550202"
ERASED_NAME, KEPT_NAME = "Zebediah Quuxley", "Ottilie Keptwell"
ERASED_BODY, KEPT_BODY = "my sister Wilhelmina knows", "I walked to Kept Harbour"
ERASED_REPLY = "Tell me more about Wilhelmina"
ERASED_CITY = "Quuxborough"
SECRETS = [ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY, "Wilhelmina"]


def _with_history(
    client: FlaskClient,
    store: EventStore,
    clock: FakeClock,
    phone: str,
    name: str,
    body: str,
    reply: str,
    city: str,
) -> dict:
    """A participant who texted `body`, was answered `reply` (by an LLM shown `body`), has a
    profile, a pending timer and a pending message."""
    person = enroll(client, phone=phone, name=name)
    assert post(client, INBOUND, message(body, sender=phone)).status_code == 200
    stream = participant_stream(person["id"])
    row = {"channel": "sms", "phone": phone}
    llm = LLMCalled(
        call_id=f"c-{phone[-4:]}x",
        purpose="reply",
        model="scripted",
        messages=[{"role": "user", "content": body}],
        response={"content": reply},
    )
    (sent,) = outbound.to_participant(row, reply)
    (pending,) = outbound.to_participant(row, f"{reply}, tomorrow", kind="prompt")
    timer = TimerScheduled(
        timer_id=f"t-{phone[-4:]}x",
        kind="daily",
        due_at=clock.now() + timedelta(days=1),
        payload={"text": f"Remember {city}"},
    )
    store.append(stream, [llm, sent, pending, ProfileSaved(changes={"city": city}), timer])
    return person


def _erase(client: FlaskClient, participant_id: str, **body: str):  # noqa: ANN202
    payload = {
        "confirm": participant_id,
        "reason": "participant asked by e-mail",
        "requested_by": "participant",
        **body,
    }
    return client.post(f"{BASE}/{participant_id}/erase", json=payload, headers=AUTH)


def _raw_sqlite_bytes(database_url: str) -> bytes:
    path = Path(make_url(database_url).database or "")
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-journal")]
    return b"".join(f.read_bytes() for f in files if f.exists())


def _postgres_hits(database_url: str, needle: str) -> list[str]:
    """Every (table.column) of a text-like column in the schema holding `needle`."""
    engine = create_engine(database_url)
    hits = []
    try:
        with engine.connect() as conn:
            for table in inspect(conn).get_table_names():
                for column in inspect(conn).get_columns(table):
                    kind = str(column["type"]).upper()
                    if not any(t in kind for t in ("CHAR", "TEXT", "JSON")):
                        continue
                    found = conn.execute(
                        text(
                            f'SELECT count(*) FROM "{table}" WHERE "{column["name"]}"::text LIKE :n'
                        ),
                        {"n": f"%{needle}%"},
                    ).scalar_one()
                    if found:
                        hits.append(f"{table}.{column['name']}")
    finally:
        engine.dispose()
    return hits


def test_erasure_leaves_no_plaintext_anywhere_and_other_participants_intact(
    client: FlaskClient, services: Services, store: EventStore, clock: FakeClock, database_url: str
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    kept = _with_history(
        client, store, clock, KEPT_PHONE, KEPT_NAME, KEPT_BODY, "Well done", "Keptford"
    )

    answer = _erase(client, gone["id"])

    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["result"]["sealed_events"] >= 5
    assert answer.get_json()["result"]["files_scrubbed"] is True
    if database_url.startswith("sqlite"):
        raw = _raw_sqlite_bytes(database_url)
        assert [s for s in SECRETS if s.encode() in raw] == []
        assert KEPT_BODY.encode() not in raw  # sealed, not plain, even while kept
    else:
        assert {s: _postgres_hits(database_url, s) for s in SECRETS} == {s: [] for s in SECRETS}
    # The other participant reads as before.
    [received] = events_of(store, kept["id"], "message.received")
    assert (received.data.body, received.data.from_address) == (KEPT_BODY, KEPT_PHONE)
    other = client.get(f"{BASE}/{kept['id']}", headers=AUTH).get_json()["result"]
    assert (other["name"], other["phone_number"], other["profile"]) == (
        KEPT_NAME,
        KEPT_PHONE,
        {"city": "Keptford"},
    )


def test_an_erased_participant_reads_erased_in_the_api_transcript_and_events(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )

    assert _erase(client, gone["id"]).status_code == 200

    shown = client.get(f"{BASE}/{gone['id']}", headers=AUTH).get_json()["result"]
    assert (shown["status"], shown["phone_number"], shown["name"], shown["profile"]) == (
        "erased",
        "[erased]",
        "[erased]",
        {},
    )
    lines = client.get(f"{BASE}/{gone['id']}/messages", headers=AUTH).get_json()["result"]
    assert lines and {line["text"] for line in lines} == {"[erased]"}
    listed = client.get(f"{BASE}/{gone['id']}/events", headers=AUTH).get_json()["result"]
    [received] = [e for e in listed if e["type"] == "message.received"]
    assert (received["data"]["body"], received["data"]["from_address"]) == ("[erased]",) * 2
    assert received["meta"]["erased"] == ["body", "from_address", "media"]
    [erased] = events_of(store, gone["id"], "participant.erased")
    assert (erased.data.reason, erased.data.requested_by) == (
        "participant asked by e-mail",
        "participant",
    )
    assert erased.meta["actor"].startswith("api:")


def test_an_export_after_an_erasure_holds_none_of_their_data_and_all_of_the_others(
    client: FlaskClient, store: EventStore, clock: FakeClock, tmp_path: Path
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    _with_history(client, store, clock, KEPT_PHONE, KEPT_NAME, KEPT_BODY, "Well done", "Kf")
    assert _erase(client, gone["id"]).status_code == 200

    export(store, tmp_path / "out", "jsonl")

    written = "".join(p.read_text() for p in (tmp_path / "out").rglob("*.jsonl"))
    assert [s for s in SECRETS if s in written] == []
    assert KEPT_BODY in written and KEPT_NAME in written
    assert "[erased]" in written


def test_erasure_stops_every_timer_and_message(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )

    assert _erase(client, gone["id"]).status_code == 200

    assert event_types(store, gone["id"])[-4:] == [
        "message.suppressed",
        "message.suppressed",
        "timer.cancelled",
        "participant.erased",
    ]
    with store.reading() as conn:
        assert set(conn.execute(select(outbox.c.status)).scalars()) == {"suppressed"}
        assert set(conn.execute(select(timers.c.status)).scalars()) == {"cancelled"}
    # A message from their number now comes from nobody enrolled.
    assert post(client, INBOUND, message("me again", sender=ERASED_PHONE)).status_code == 200
    assert event_types(store, gone["id"])[-1] == "participant.erased"


def test_replay_check_passes_after_an_erasure(
    client: FlaskClient, store: EventStore, clock: FakeClock, database_url: str
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    _with_history(client, store, clock, KEPT_PHONE, KEPT_NAME, KEPT_BODY, "Well done", "Kf")
    assert _erase(client, gone["id"]).status_code == 200

    env = {**os.environ, "DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    result = subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", "replay", "--check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 differences, 0 unreadable" in result.stdout


def test_an_erasure_without_the_right_confirmation_is_a_400_that_erases_nothing(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )

    missing = _erase(client, gone["id"], confirm=None)  # type: ignore[arg-type]
    wrong = _erase(client, gone["id"], confirm="someone-else")

    for answer in (missing, wrong):
        assert answer.status_code == 400
        assert "repeat the participant id" in answer.get_json()["message"]
        assert gone["id"] in answer.get_json()["message"]
    assert "participant.erased" not in event_types(store, gone["id"])
    [received] = events_of(store, gone["id"], "message.received")
    assert received.data.body == ERASED_BODY


def test_a_second_erasure_is_a_409(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    assert _erase(client, gone["id"]).status_code == 200

    again = _erase(client, gone["id"])

    assert again.status_code == 409
    assert "already erased" in again.get_json()["message"]


def test_an_erased_participant_cannot_be_reactivated(
    client: FlaskClient, store: EventStore, clock: FakeClock
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    assert _erase(client, gone["id"]).status_code == 200

    answer = client.put(f"{BASE}/{gone['id']}", json={"status": "active"}, headers=AUTH)

    assert answer.status_code == 409
    assert client.get(f"{BASE}/{gone['id']}", headers=AUTH).get_json()["result"]["status"] == (
        "erased"
    )


def test_tandem_erase_asks_for_the_id_and_names_the_operator(
    client: FlaskClient, store: EventStore, clock: FakeClock, database_url: str
) -> None:
    gone = _with_history(
        client, store, clock, ERASED_PHONE, ERASED_NAME, ERASED_BODY, ERASED_REPLY, ERASED_CITY
    )
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    args = ["erase", ERASED_PHONE, "--reason", "ethics board", "--requested-by", "ethics_board"]

    refused = CliRunner().invoke(cli, args, env=env, input="not-the-id\n")
    done = CliRunner().invoke(cli, args, env=env, input=f"{gone['id']}\n")

    assert refused.exit_code == 1 and "repeat the participant id" in refused.output
    assert done.exit_code == 0, done.output
    assert f"participant {gone['id']} erased" in done.output
    [erased] = events_of(store, gone["id"], "participant.erased")
    assert erased.meta["actor"].startswith("cli:")
    assert erased.data.requested_by == "ethics_board"


def test_erasure_without_a_master_key_is_refused(database_url: str) -> None:
    plain = EventStore(make_engine(database_url))  # no master key: nothing is sealed
    person = enrolled(ERASED_PHONE)
    plain.append(participant_stream(person.participant_id), [person])
    plain.engine.dispose()
    result = CliRunner().invoke(
        cli,
        ["erase", ERASED_PHONE, "--reason", "r", "--requested-by", "participant", "--yes"],
        env={"DATABASE_URL": database_url},
    )
    assert result.exit_code == 1
    assert "erasure needs TANDEM_MASTER_KEY" in result.output


def test_events_recorded_before_the_master_key_was_set_block_an_erasure(database_url: str) -> None:
    plain = EventStore(make_engine(database_url))
    person = enrolled(ERASED_PHONE, name=ERASED_NAME)
    plain.append(participant_stream(person.participant_id), [person])
    plain.engine.dispose()
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    args = ["erase", person.participant_id, "--reason", "r", "--requested-by", "other", "--yes"]

    result = CliRunner().invoke(cli, args, env=env)

    assert result.exit_code == 1
    assert "1 of this participant's events were recorded before TANDEM_MASTER_KEY" in result.output
