"""A turn reads only its participant's last messages from the stream (bot.store.recent): the
messages both ways and where steps began, in order; everything else it decides on is in the
participants row's memory and the timers table."""

from __future__ import annotations

from bot.conversation.turns import Turn
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.worker import Worker
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled, ToolCalled
from bot.store.event_types.messages import MessageQueued, MessageSent
from bot.store.events import participant_stream
from bot.store.recent import window_rows
from tests.factories import enrolled, received


def _queued(n: int, phone: str) -> MessageQueued:
    return MessageQueued(outbox_id=f"o{n}", to_address=phone, channel="sms", body=f"m{n}")


def test_a_turn_reads_its_last_messages_only(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    limit = 3
    services = build_services(
        load_settings(
            {"DATABASE_URL": database_url, "CHAT_HISTORY_LIMIT": str(limit)}, env_file=None
        ),
        clock=clock,
        store=store,
    )
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    older = [_queued(n, first.phone) for n in range(window_rows(limit) + 5)]
    store.append(stream, older)
    store.append(
        stream,
        [
            LLMCalled(call_id="c1", purpose="intake", model="m", messages=[{"role": "system"}]),
            ToolCalled(call_id="t1", tool="scheduler", arguments={}, result="ok"),
            _queued(999, first.phone),
            MessageSent(outbox_id="o999", provider_sid="SM1"),
            received("SM0001", "hello"),
        ],
    )
    seen: list[list] = []

    def handler(turn: Turn) -> list:
        seen.append(turn.history())
        return []

    worker = Worker(services, handler, "history-test")
    while worker.run_once():
        pass

    window = seen[-1]
    assert len(window) == window_rows(limit)
    assert {e.event_type for e in window} == {"message.queued", "message.received"}
    assert [e.event_type for e in window[-2:]] == ["message.queued", "message.received"]
    versions = [e.stream_version for e in window]
    assert versions == sorted(versions)
    assert window[0].data.outbox_id == f"o{len(older) - window_rows(limit) + 2}"
    full = [e.event_type for e in store.load(stream)]
    assert "llm.called" in full and full.count("message.queued") == len(older) + 1
