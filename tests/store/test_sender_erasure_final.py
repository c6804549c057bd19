"""An unknown sender's erasure is final on PostgreSQL as a participant's is: erased by the app
role (`tandem erase --phone`'s service, or retention), then one `tandem maintenance` by the
owner, and no version of their data key is left in `data_keys`' pages (read raw with
pageinspect); the other sender's key still opens, and the raw rows never held the text."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from bot.core.clock import FakeClock
from bot.services import maintenance, sender_erasure
from bot.store.database import make_engine
from bot.store.event_store import EventStore
from bot.store.events import SYSTEM_STREAM, new_id, sender_stream
from bot.store.replay import check
from bot.store.schema import events
from bot.store.sealing import Sealer
from tests.conftest import ADMIN_URL, TEST_MASTER_KEY
from tests.factories import received
from tests.store.test_erasure_final import _unwrappable
from tests.store.test_least_privilege import app_role_url  # noqa: F401  (a fixture)

GONE, KEPT, OLD = "+14155550101", "+14155550102", "+14155550103"
SECRET = "my HIV status is private"


def _text_from(store: EventStore, phone: str, sid: str) -> str:
    """Record a text from `phone` as the webhook does for a number no participant has."""
    sender_id = new_id()
    store.append(sender_stream(sender_id), [received(sid, body=SECRET, phone=phone)])
    return sender_id


def test_an_erased_or_expired_senders_key_is_gone_after_maintenance(
    app_role_url: str,  # noqa: F811
) -> None:
    database = make_url(app_role_url).database
    owner_url = make_url(ADMIN_URL).set(database=database).render_as_string(hide_password=False)
    sealer, clock = Sealer(TEST_MASTER_KEY), FakeClock()
    app = EventStore(make_engine(app_role_url), clock=clock, sealer=sealer)
    owner = EventStore(make_engine(owner_url), clock=clock, sealer=Sealer(TEST_MASTER_KEY))
    try:
        old = _text_from(app, OLD, "SM0old")
        clock.advance(timedelta(days=31))
        gone, kept = _text_from(app, GONE, "SM0gone"), _text_from(app, KEPT, "SM0kept")
        with app.reading() as conn:
            stored = [str(d) for (d,) in conn.execute(select(events.c.data))]
        assert stored and not any(SECRET in row or "4155550" in row for row in stored)

        done = sender_erasure.erase_phone(
            app, GONE, reason="asked", requested_by="other", actor="test"
        )
        assert done.sender_id == gone and done.pending_maintenance
        # The app role could not VACUUM: the destroyed key is still in a dead row version.
        assert gone in _unwrappable(owner_url, sealer)

        record = maintenance.run(owner, actor="test", retention_days=30)
        assert record.expired_senders == 1 and record.erased_keys == 2
        assert record.pending_erasures == 0

        assert _unwrappable(owner_url, sealer) == {kept}
        for sender_id, body in ((gone, "[erased]"), (old, "[erased]"), (kept, SECRET)):
            app.sealer.forget(sender_id)
            assert app.load(sender_stream(sender_id))[0].data.body == body
        erased = [e.data.cause for e in app.read_all() if e.event_type == "sender.erased"]
        assert sorted(erased) == ["request", "retention"]
        assert [e.event_type for e in owner.load(SYSTEM_STREAM)] == ["maintenance.completed"]
        assert check(owner).clean
    finally:
        app.engine.dispose()
        owner.engine.dispose()


def test_the_app_role_cannot_destroy_a_senders_key_without_a_recorded_erasure(
    app_role_url: str,  # noqa: F811
) -> None:
    app = EventStore(make_engine(app_role_url), clock=FakeClock(), sealer=Sealer(TEST_MASTER_KEY))
    try:
        sender_id = _text_from(app, GONE, "SM0x")
        with pytest.raises(DBAPIError, match=r"no participant.erased event \(nor sender"):
            with app.engine.begin() as conn:
                conn.execute(text("SELECT tandem_erase_data_key(:s, now())"), {"s": sender_id})
        app.sealer.forget(sender_id)
        assert app.load(sender_stream(sender_id))[0].data.body == SECRET
    finally:
        app.engine.dispose()
