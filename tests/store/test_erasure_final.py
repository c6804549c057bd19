"""Erasure that is final on PostgreSQL: after an erase by the app role and one `tandem
maintenance` by the owner, no version of the participant's data key is left in the pages of
`data_keys` (read raw with pageinspect, free space included) nor in a `pg_dump`, while the
others' keys open;
and the app role may add and read data keys but not UPDATE or DELETE them."""

from __future__ import annotations

import binascii
import re
import subprocess
from types import SimpleNamespace

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from bot.core.clock import FakeClock
from bot.services import erasure, maintenance
from bot.services.refusal import Refused
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.store.replay import check
from bot.store.sealing import SealedWithoutKey, Sealer
from tests.conftest import ADMIN_URL, TEST_MASTER_KEY
from tests.factories import enrolled, received
from tests.store.test_least_privilege import app_role_url  # noqa: F401  (a fixture)

WRAPPED = re.compile(rb"[A-Za-z0-9+/]{80,}")  # base64 of nonce + 32-byte key + tag (60 bytes)


def _unwrappable(superuser_url: str, sealer: Sealer) -> set[str]:
    """The participants whose data key unwraps from any bytes of any page of `data_keys`:
    every tuple version, live or dead, and what freed space still holds."""
    engine = make_engine(superuser_url)
    found: set[str] = set()
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE EXTENSION IF NOT EXISTS pageinspect"))
            pids = [r[0] for r in conn.execute(text("SELECT participant_id FROM data_keys"))]
            pages = conn.execute(
                text("SELECT pg_relation_size('data_keys') / current_setting('block_size')::int")
            ).scalar_one()
            items = 0
            for block in range(pages):
                raw = conn.execute(
                    text("SELECT get_raw_page('data_keys', :b)"), {"b": block}
                ).scalar_one()
                items += conn.execute(
                    text("SELECT count(*) FROM heap_page_items(get_raw_page('data_keys', :b))"),
                    {"b": block},
                ).scalar_one()
                for run in WRAPPED.findall(bytes(raw)):
                    for start in range(len(run) - 79):
                        candidate = run[start : start + 80].decode()
                        row = SimpleNamespace(wrapped=candidate, master_key_id="?")
                        for pid in pids:
                            try:
                                sealer.unwrap(pid, row)
                            except (SealedWithoutKey, binascii.Error, ValueError):
                                continue
                            found.add(pid)
            assert items >= len(pids)  # the pages read hold every live row at least
    finally:
        engine.dispose()
    return found


def test_after_an_erase_and_maintenance_no_version_of_the_key_is_left(
    app_role_url: str,  # noqa: F811
) -> None:
    database = make_url(app_role_url).database
    owner_url = make_url(ADMIN_URL).set(database=database).render_as_string(hide_password=False)
    sealer = Sealer(TEST_MASTER_KEY)
    app = EventStore(make_engine(app_role_url), clock=FakeClock(), sealer=sealer)
    owner = EventStore(make_engine(owner_url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    try:
        gone = enrolled("+14155550101", name="Ada Gone")
        kept = enrolled("+14155550102", name="Bo Kept")
        for person in (gone, kept):
            stream = participant_stream(person.participant_id)
            app.append(stream, [person])
            said = received(
                "SM" + person.participant_id[:8], body="my HIV status", phone=person.phone
            )
            app.append(stream, [said], expected_version=1)
        done = erasure.erase(
            app,
            gone.participant_id,
            confirm=gone.participant_id,
            reason="asked",
            requested_by="participant",
            actor="test",
        )
        assert done.pending_maintenance and "tandem maintenance" in done.finality
        # The app role could not VACUUM: the destroyed key is still in a dead row version.
        assert gone.participant_id in _unwrappable(owner_url, sealer)

        record = maintenance.run(owner, actor="test")
        assert record.rewritten == ["data_keys"] and record.erased_keys == 1
        assert record.pending_erasures == 0
        assert [e.event_type for e in owner.load(SYSTEM_STREAM)] == ["maintenance.completed"]

        assert _unwrappable(owner_url, sealer) == {kept.participant_id}
        assert app.load(participant_stream(gone.participant_id))[0].data.name == "[erased]"
        assert app.load(participant_stream(kept.participant_id))[0].data.name == "Bo Kept"
        assert check(owner).clean
        dump = _pg_dump(owner_url)
        for plain in (b"Ada Gone", b"+14155550101", b"HIV"):  # messages are sealed for both
            assert plain not in dump
        assert b"Bo Kept" in dump  # the kept participant's row, to send to: the search finds it
        assert _unwraps_from(dump, sealer, [gone.participant_id, kept.participant_id]) == {
            kept.participant_id
        }
    finally:
        app.engine.dispose()
        owner.engine.dispose()


def _pg_dump(url: str) -> bytes:
    """The database as `pg_dump` writes it (a backup's contents)."""
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    done = subprocess.run(["pg_dump", "--no-owner", plain], capture_output=True, check=True)
    return done.stdout


def _unwraps_from(dump: bytes, sealer: Sealer, pids: list[str]) -> set[str]:
    """The participants whose data key unwraps from any key-shaped text of `dump`."""
    found: set[str] = set()
    for run in WRAPPED.findall(dump):
        for start in range(len(run) - 79):
            row = SimpleNamespace(wrapped=run[start : start + 80].decode(), master_key_id="?")
            for pid in pids:
                try:
                    sealer.unwrap(pid, row)
                except (SealedWithoutKey, binascii.Error, ValueError):
                    continue
                found.add(pid)
    return found


def test_maintenance_refuses_as_the_app_role(app_role_url: str) -> None:  # noqa: F811
    app = EventStore(make_engine(app_role_url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    try:
        with pytest.raises(Refused, match="does not own data_keys"):
            maintenance.run(app, actor="test")
        assert app.load(SYSTEM_STREAM) == []
    finally:
        app.engine.dispose()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE data_keys SET wrapped = NULL",
        "DELETE FROM data_keys",
        "SELECT tandem_erase_data_key(participant_id, now()) FROM data_keys",
    ],
)
def test_the_app_role_cannot_destroy_keys_but_through_a_recorded_erasure(
    app_role_url: str,  # noqa: F811
    statement: str,
) -> None:
    app = EventStore(make_engine(app_role_url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    person = enrolled(name="Cy Safe")
    stream = participant_stream(person.participant_id)
    app.append(stream, [person])
    try:
        with pytest.raises(DBAPIError, match="permission denied|no participant.erased event"):
            with app.engine.begin() as conn:
                conn.execute(text(statement))
        app.sealer.forget(person.participant_id)
        assert app.load(stream)[0].data.name == "Cy Safe"
    finally:
        app.engine.dispose()
