"""The store commands: migrate, replay and events, including their database errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import update

from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived
from bot.store.events import participant_stream
from bot.store.migrate import head_revision
from bot.store.schema import participants
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled

ROOT = Path(__file__).resolve().parents[2]


def tandem(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    return subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_events_prints_json_lines_filtered_by_participant_and_type(
    store: EventStore, database_url: str
) -> None:
    one, two = enrolled(), enrolled(phone="+442071838750")
    store.append(
        participant_stream(one.participant_id),
        [
            one,
            MessageReceived(
                message_sid="SM1", from_address=one.phone, to_address="+15005550006", channel="sms"
            ),
        ],
    )
    store.append(participant_stream(two.participant_id), [two])
    result = tandem(
        "events",
        "--participant",
        one.participant_id,
        "--type",
        "message.received",
        url=database_url,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(x["type"], x["stream_version"]) for x in lines] == [("message.received", 2)]
    assert lines[0]["data"]["message_sid"] == "SM1"


def test_replay_check_exits_1_on_a_difference_and_0_when_clean(
    store: EventStore, database_url: str
) -> None:
    first = enrolled()
    store.append(participant_stream(first.participant_id), [first])
    clean = tandem("replay", "--check", url=database_url)
    assert clean.returncode == 0, clean.stderr
    assert "0 differences" in clean.stdout
    with store.engine.begin() as conn:
        conn.execute(update(participants).values(timezone="Europe/Paris"))
    dirty = tandem("replay", "--check", url=database_url)
    assert dirty.returncode == 1
    assert "timezone" in dirty.stdout


def test_migrate_on_an_empty_sqlite_file_creates_the_schema(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    result = tandem("migrate", url=url)
    assert result.returncode == 0, result.stderr
    assert f"revision {head_revision()}" in result.stdout
    assert tandem("events", url=url).returncode == 0


def test_a_corrupt_database_file_gives_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(b"this is not a database" * 100)
    result = tandem("events", url=f"sqlite:///{path}")
    assert result.returncode == 1
    assert "corrupt or not a SQLite database" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unmigrated_database_tells_the_operator_to_migrate(tmp_path: Path) -> None:
    result = tandem("replay", url=f"sqlite:///{tmp_path / 'empty.db'}")
    assert result.returncode == 1
    assert "tandem migrate" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unreachable_postgres_gives_one_clear_error() -> None:
    result = tandem("events", url="postgresql://postgres@127.0.0.1:1/nowhere")
    assert result.returncode == 1
    assert "cannot use the database" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_setting_stops_the_command_with_the_list_of_problems() -> None:
    env = {**os.environ, "DEFAULT_TIMEZONE": "Nowhere/Land"}
    result = subprocess.run(
        [sys.executable, "-c", "from bot.cli.main import main; main()", "events"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "DEFAULT_TIMEZONE" in result.stderr
    assert "Traceback" not in result.stderr


def test_events_takes_a_phone_for_participant_and_says_when_nothing_matches(
    store: EventStore, database_url: str
) -> None:
    one = enrolled(phone="+14155552671")
    store.append(participant_stream(one.participant_id), [one])

    by_phone = tandem("events", "--participant", "+1 415 555 2671", url=database_url)
    unknown = tandem("events", "--participant", "+14155550000", url=database_url)
    misspelt = tandem("events", "--type", "message.recieved", url=database_url)
    none = tandem("events", "--type", "message.received", url=database_url)

    assert by_phone.returncode == 0, by_phone.stderr
    assert [json.loads(line)["type"] for line in by_phone.stdout.splitlines()] == [
        "participant.enrolled"
    ]
    assert unknown.returncode == 1
    assert "no participant has the id or phone '+14155550000'" in unknown.stderr
    assert misspelt.returncode == 1
    assert "unknown event type 'message.recieved'; did you mean 'message.received'?" in (
        misspelt.stderr
    )
    assert (none.returncode, none.stdout) == (1, "")
    assert "no events match" in none.stderr


def test_timers_list_takes_a_phone_and_exits_1_when_nothing_matches(
    store: EventStore, database_url: str
) -> None:
    one = enrolled(phone="+14155552671")
    store.append(participant_stream(one.participant_id), [one])

    mine = tandem("timers", "list", "--participant", "14155552671", url=database_url)
    unknown = tandem("timers", "list", "--participant", "nobody", url=database_url)

    assert mine.returncode == 1 and "no timers match" in mine.stderr
    assert unknown.returncode == 1 and "no participant has the id or phone 'nobody'" in (
        unknown.stderr
    )
