"""A turn's history leaves out the records no decision reads (the LLM's stored prompts, tool
call records, delivery bookkeeping), so a long stream stays cheap to load; everything else is
there, in order."""

from __future__ import annotations

from bot.conversation.turns import Turn
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.worker import NOT_IN_TURN_HISTORY, Worker
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled, ToolCalled
from bot.store.event_types.messages import MessageQueued, MessageSent
from bot.store.events import participant_stream
from tests.factories import enrolled, received


def test_a_turn_sees_its_stream_without_llm_tool_and_delivery_records(
    database_url: str, store: EventStore, clock: FakeClock
) -> None:
    services = build_services(
        load_settings({"DATABASE_URL": database_url}, env_file=None), clock=clock, store=store
    )
    first = enrolled()
    stream = participant_stream(first.participant_id)
    store.append(stream, [first])
    store.append(
        stream,
        [
            LLMCalled(call_id="c1", purpose="intake", model="m", messages=[{"role": "system"}]),
            ToolCalled(call_id="t1", tool="scheduler", arguments={}, result="ok"),
            MessageQueued(outbox_id="o1", to_address=first.phone, channel="sms", body="Hi"),
            MessageSent(outbox_id="o1", provider_sid="SM1"),
            received("SM0001", "hello"),
        ],
    )
    seen: list[list[str]] = []

    def handler(turn: Turn) -> list:
        seen.append([e.event_type for e in turn.history()])
        return []

    worker = Worker(services, handler, "history-test")
    while worker.run_once():
        pass

    # message.sent stays: a question is answered only once it was sent.
    assert seen[-1] == [
        "participant.enrolled",
        "message.queued",
        "message.sent",
        "message.received",
    ]
    assert not set(seen[-1]) & set(NOT_IN_TURN_HISTORY)
    full = [e.event_type for e in store.load(stream)]
    assert "llm.called" in full  # still stored, of course
