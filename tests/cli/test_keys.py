"""`tandem keys generate` and `tandem keys rotate`: a new master key, and every data key
re-wrapped under it without an event changing."""

from __future__ import annotations

import base64

from click.testing import CliRunner

from bot.cli.main import cli
from bot.core.keys import generate_master_key
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import participant_stream
from bot.store.sealing import Sealer
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled


def test_generate_prints_32_random_bytes_in_urlsafe_base64() -> None:
    result = CliRunner().invoke(cli, ["keys", "generate"])
    assert result.exit_code == 0
    assert len(base64.urlsafe_b64decode(result.output.strip())) == 32


def test_rotate_without_the_new_key_says_where_to_put_it(database_url: str) -> None:
    env = {"DATABASE_URL": database_url, "TANDEM_MASTER_KEY": TEST_MASTER_KEY}
    result = CliRunner().invoke(cli, ["keys", "rotate"], env=env)
    assert result.exit_code == 1
    assert "TANDEM_NEW_MASTER_KEY: set it to the new master key" in result.output


def test_rotate_rewraps_so_that_only_the_new_key_opens_the_data(
    store: EventStore, database_url: str
) -> None:
    person = enrolled(name="Grace Rotated")
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    new_key = generate_master_key()
    env = {
        "DATABASE_URL": database_url,
        "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        "TANDEM_NEW_MASTER_KEY": new_key,
    }

    result = CliRunner().invoke(cli, ["keys", "rotate"], env=env)

    assert result.exit_code == 0, result.output
    assert "1 data keys re-wrapped, 1 phone hashes re-keyed and 0 staff TOTP" in result.output
    rotated = EventStore(make_engine(database_url), sealer=Sealer(new_key))
    try:
        assert rotated.load(stream)[0].data.name == "Grace Rotated"
    finally:
        rotated.engine.dispose()
