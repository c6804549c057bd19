"""An event whose text no database stores (NUL) is appended once, with U+FFFD in its payload and
projections and the original kept in its meta; replay agrees."""

from __future__ import annotations

from bot.core.storable import original
from bot.store.event_store import EventStore
from bot.store.event_types import MessageReceived, ParticipantUpdated
from bot.store.events import participant_stream
from bot.store.replay import compare, rebuild
from tests.factories import enrolled


def test_a_nul_is_stored_replaced_with_the_original_in_meta_on_both_engines(
    store: EventStore,
) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    store.append(stream, [person])
    received = MessageReceived(
        message_sid="SM1",
        from_address="+14155552671",
        to_address="+15005550006",
        channel="sms",
        body="I feel\x00 fine",
    )

    store.append(stream, [received, ParticipantUpdated(changes={"name": "Ana\x00"})], 1)

    message, update = store.load(stream)[1:]
    assert message.data.body == "I feel\ufffd fine"
    assert original(message.meta["escaped"]["body"]) == "I feel\x00 fine"
    assert original(update.meta["escaped"]["changes.name"]) == "Ana\x00"
    assert store.projection_row("participants", person.participant_id)["name"] == "Ana\ufffd"
    report = rebuild(store)
    compare(store, report)
    assert report.differences == [] and report.unreadable == []
