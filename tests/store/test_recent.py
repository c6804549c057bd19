"""The window a turn reads (bot.store.recent): the last 2 x CHAT_HISTORY_LIMIT message and
step events of the stream, oldest first; none for 0; every message for -1 ("all")."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.event_types.conversation import LLMCalled
from bot.store.event_types.interventions import StepEntered
from bot.store.events import participant_stream
from bot.store.recent import last_messages
from tests.factories import enrolled, received


def test_the_window_holds_the_last_messages_and_steps_in_order(store: EventStore) -> None:
    person = enrolled()
    stream = participant_stream(person.participant_id)
    noise = LLMCalled(call_id="c", purpose="intake", model="m", messages=[])
    payloads = [person]
    for n in range(30):
        payloads += [received(f"SM{n}", body=f"m{n}"), noise]
    payloads.append(StepEntered(intervention="i", step="welcome"))
    store.append(stream, payloads)
    with store.reading() as conn:
        window = last_messages(conn, stream, 5, store.sealer)
        everything = last_messages(conn, stream, -1, store.sealer)
        nothing = last_messages(conn, stream, 0, store.sealer)
    assert [e.event_type for e in window[-1:]] == ["step.entered"]
    assert [e.data.body for e in window[:-1]] == [f"m{n}" for n in range(21, 30)]
    assert len(everything) == 31 and everything[0].data.body == "m0"
    assert nothing == []
