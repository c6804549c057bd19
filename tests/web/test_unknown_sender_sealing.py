"""An unknown sender's text is sealed under a key of their own and can be erased (`tandem erase
--phone`, the service) or expire (UNKNOWN_SENDER_RETENTION_DAYS); an erased participant who
texts again is an unknown sender, sent nothing, and leaves no readable body. Through the signed
webhook, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient
from sqlalchemy import select

from bot.cli.main import cli
from bot.core.clock import FakeClock
from bot.services import erasure, sender_erasure
from bot.services.refusal import Refused
from bot.store.event_store import EventStore
from bot.store.events import sender_of
from bot.store.replay import check
from bot.store.schema import data_keys, events, sender_phones
from bot.store.services import Services
from tests.conftest import TEST_MASTER_KEY
from tests.web.twilio_requests import (
    INBOUND,
    client_with,
    deliver_concurrently,
    enroll,
    message,
    post,
    rows,
)

STRANGER = "+12025550123"
SECRET = "my HIV status is private"


def _raw_rows(store: EventStore, sender_id: str | None = None) -> list[str]:
    """The stored `data` of every unknown sender's event, as the database holds it (text)."""
    query = select(events.c.stream_id, events.c.data).where(events.c.stream_id.like("sender:%"))
    with store.reading() as conn:
        found = conn.execute(query).all()
    return [str(data) for stream, data in found if sender_id in (None, sender_of(stream))]


def _senders(store: EventStore) -> list[str]:
    with store.reading() as conn:
        return [r.sender_id for r in conn.execute(select(sender_phones.c.sender_id))]


def _bodies(store: EventStore, sender_id: str) -> list[str]:
    return [
        e.data.body for e in store.load(f"sender:{sender_id}") if e.event_type == "message.received"
    ]


def _erase(store: EventStore, phone: str = STRANGER) -> sender_erasure.SenderErasure:
    return sender_erasure.erase_phone(
        store, phone, reason="asked by phone", requested_by="other", actor="test"
    )


def test_an_unknown_senders_text_is_sealed_in_the_stored_row(
    client: FlaskClient, services: Services
) -> None:
    post(client, INBOUND, message(SECRET, sender=STRANGER))
    post(client, INBOUND, message("and again", sender=f"whatsapp:{STRANGER}"))

    [sender_id] = _senders(services.store)
    stored = _raw_rows(services.store)
    assert len(stored) == 2
    assert not any(SECRET in row or "again" in row or STRANGER[2:] in row for row in stored)
    assert all("_sealed" in row for row in stored)
    assert _bodies(services.store, sender_id) == [SECRET, "and again"]  # opens with the key


def test_erasing_a_number_makes_its_messages_read_erased_and_forgets_it(
    client: FlaskClient, services: Services
) -> None:
    post(client, INBOUND, message(SECRET, sender=STRANGER))
    post(client, INBOUND, message("someone else", sender="+12025550188"))
    with services.store.reading() as conn:
        query = select(sender_phones.c.sender_id, sender_phones.c.phone_hmac)
        mapping = {r.sender_id: r.phone_hmac for r in conn.execute(query)}
    gone = next(s for s, h in mapping.items() if h == services.store.sealer.phones.digest(STRANGER))
    kept = next(s for s in mapping if s != gone)

    done = _erase(services.store, "+1 (202) 555-0123")  # canonicalised with phonenumbers

    assert (done.sender_id, done.sealed_events) == (gone, 1)
    assert _bodies(services.store, gone) == ["[erased]"]
    assert _bodies(services.store, kept) == ["someone else"]
    erased = services.store.load(f"sender:{gone}")[-1]
    assert (erased.event_type, erased.data.cause) == ("sender.erased", "request")
    assert _senders(services.store) == [kept]
    with pytest.raises(Refused, match="no unknown sender's messages are kept"):
        _erase(services.store)
    # The number texting again starts a new stream, under a new key.
    post(client, INBOUND, message("back again", sender=STRANGER))
    [again] = [s for s in _senders(services.store) if s != kept]
    assert again != gone and _bodies(services.store, again) == ["back again"]
    assert check(services.store).clean


def test_a_reply_notice_is_sealed_and_suppressed_by_the_erasure(services: Services) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="reply")
    post(client, INBOUND, message(SECRET, sender=STRANGER))
    [row] = rows(services.store, "outbox")
    assert row["stream_id"].startswith("sender:") and row["status"] == "pending"

    done = _erase(services.store)

    assert done.suppressed == 1
    [row] = rows(services.store, "outbox")
    assert (row["status"], row["to_address"]) == ("suppressed", "[erased]")
    assert check(services.store).clean


def test_tandem_erase_phone_erases_from_the_command_line(
    client: FlaskClient, services: Services, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    post(client, INBOUND, message(SECRET, sender=STRANGER))
    [sender_id] = _senders(services.store)
    for name, value in {
        "DATABASE_URL": database_url,
        "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
        "DEFAULT_REGION": "US",
    }.items():
        monkeypatch.setenv(name, value)

    result = CliRunner().invoke(
        cli,
        ["erase", "--phone", "202-555-0123", "--reason", "asked", "--requested-by", "other"],
        input="202-555-0123\n",
    )

    assert result.exit_code == 0, result.output
    assert f"unknown sender {sender_id} erased: 1 events now read [erased]" in result.output
    services.store.sealer.forget(sender_id)
    assert _bodies(services.store, sender_id) == ["[erased]"]
    again = CliRunner().invoke(
        cli, ["erase", "--phone", STRANGER, "--reason", "x", "--requested-by", "other", "--yes"]
    )
    assert again.exit_code == 1 and "no unknown sender's messages are kept" in again.output
    replayed = CliRunner().invoke(cli, ["replay", "--check"])
    assert replayed.exit_code == 0, replayed.output


def test_an_erased_participant_who_texts_again_is_sent_nothing_and_leaves_no_body(
    client: FlaskClient, services: Services
) -> None:
    participant = enroll(services, STRANGER)
    pid = participant["participant_id"]
    erasure.erase(
        services.store, pid, confirm=pid, reason="asked", requested_by="participant", actor="t"
    )
    work_before = rows(services.store, "work_items")

    for body in (SECRET, "STOP", "HELP"):
        assert post(client, INBOUND, message(body, sender=STRANGER)).status_code == 200

    assert rows(services.store, "outbox") == []
    assert rows(services.store, "work_items") == work_before
    [sender_id] = _senders(services.store)
    assert not any(SECRET in row for row in _raw_rows(services.store))
    _erase(services.store)
    assert _bodies(services.store, sender_id) == ["[erased]"] * 3
    assert check(services.store).clean


def test_under_reply_an_erased_participant_gets_what_any_stranger_gets(
    services: Services,
) -> None:
    client = client_with(services, UNKNOWN_SENDER_POLICY="reply")
    participant = enroll(services, STRANGER)
    pid = participant["participant_id"]
    erasure.erase(
        services.store, pid, confirm=pid, reason="asked", requested_by="participant", actor="t"
    )

    post(client, INBOUND, message(SECRET, sender=STRANGER))
    post(client, INBOUND, message(SECRET, sender="+12025550188"))

    notices = [r for r in rows(services.store, "outbox") if r["stream_id"].startswith("sender:")]
    assert len(notices) == 2 and notices[0]["body"] == notices[1]["body"]
    assert {r["kind"] for r in notices} == {"notice"}


def test_retention_destroys_an_old_senders_key_and_not_a_recent_ones(
    client: FlaskClient, services: Services, clock: FakeClock
) -> None:
    post(client, INBOUND, message("old news", sender=STRANGER))
    clock.advance(timedelta(days=25))
    post(client, INBOUND, message("fresh", sender="+12025550188"))
    [old] = [s for s in _senders(services.store) if _bodies(services.store, s) == ["old news"]]
    [recent] = [s for s in _senders(services.store) if s != old]
    clock.advance(timedelta(days=6))  # the first key is 31 days old, the second 6

    done = sender_erasure.expire(services.store, clock.now(), 30, "retention")

    assert [d.sender_id for d in done] == [old]
    assert _bodies(services.store, old) == ["[erased]"]
    assert _bodies(services.store, recent) == ["fresh"]
    erased = services.store.load(f"sender:{old}")[-1]
    assert (erased.event_type, erased.data.cause, erased.meta["actor"]) == (
        "sender.erased",
        "retention",
        "retention",
    )
    with services.store.reading() as conn:
        query = select(data_keys.c.participant_id, data_keys.c.wrapped)
        keys = {r.participant_id: r.wrapped for r in conn.execute(query)}
    assert keys[old] is None and keys[recent] is not None
    assert sender_erasure.expire(services.store, clock.now(), 30, "retention") == []
    assert check(services.store).clean


def test_the_scheduler_leaders_periodic_check_applies_the_retention(
    client: FlaskClient, services: Services, clock: FakeClock
) -> None:
    from bot.runtime.threads import Runtime

    post(client, INBOUND, message("old news", sender=STRANGER))
    [sender_id] = _senders(services.store)
    runtime = Runtime(services, handler=None, messenger=None)  # type: ignore[arg-type]
    runtime._beat()
    assert _bodies(services.store, sender_id) == ["old news"]  # 0 days old

    clock.advance(timedelta(days=services.settings.unknown_sender_retention_days, seconds=1))
    runtime._beat()

    assert _bodies(services.store, sender_id) == ["[erased]"]
    assert _senders(services.store) == []


def test_an_unknown_senders_text_still_counts_as_needing_a_human(
    client: FlaskClient, services: Services, clock: FakeClock
) -> None:
    from bot.store.reads.attention import attention

    post(client, INBOUND, message(SECRET, sender=STRANGER))

    with services.store.reading() as conn:
        counted = attention(conn, clock.now(), timedelta(days=1))
    assert counted.needing_human == 1


def test_five_concurrent_first_messages_from_a_stranger_make_one_sender(
    client: FlaskClient, services: Services
) -> None:
    form = message(SECRET, sender=STRANGER)

    answers = deliver_concurrently(client.application, form)

    assert answers == [200] * 5
    [sender_id] = _senders(services.store)
    assert _bodies(services.store, sender_id) == [SECRET]
    assert len(_raw_rows(services.store)) == 1
