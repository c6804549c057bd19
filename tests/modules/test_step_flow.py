"""The step module inside the real flow: enrollment moves a participant into their
intervention, judgements go through the real openai SDK as structured output, everything is
appended as events, and replaying them rebuilds the same participant row."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.conversation import timer_turns
from bot.core.clock import FakeClock
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import StateTransitioned
from bot.store.replay import compare, rebuild
from modules import MODULES
from modules.step import StepModule
from tests.conversation.flow.conftest import Conversation
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply
from tests.modules.step_harness import FIXTURES


@pytest.fixture
def conversation(
    database_url: str, store: EventStore, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Conversation]:
    monkeypatch.setattr(timer_turns, "HANDLERS", dict(timer_turns.HANDLERS))
    monkeypatch.setitem(MODULES, "step", StepModule(root=FIXTURES))
    with FakeOpenAI() as fake:
        values = {
            "DATABASE_URL": database_url,
            "OPENAI_BASE_URL": fake.url + "/v1",
            "OPENAI_API_KEY": "test-key",
            "TANDEM_MODEL": "fake-model",
            "LLM_TIMEOUT_SECONDS": "2",
            "LLM_MAX_RETRIES": "0",
            "SAFETY_CLASSIFIER": "off",  # scripted in FIFO order; tests/conversation covers it
        }
        settings = load_settings(values, env_file=None)
        yield Conversation(build_services(settings, clock=clock, store=store), fake)


def test_an_enrolled_participant_starts_at_the_root_step_and_moves_on(
    conversation: Conversation,
) -> None:
    conversation.enroll(intervention="good", name="Ana")
    conversation.run()
    conversation.receive("yes, let's go")
    conversation.fake.script(
        ScriptedReply.structured({"level": "none"}),
        ScriptedReply.structured({"answer": "yes"}),
        ScriptedReply.text("They are keen."),
        ScriptedReply.text("Great! What would you like to change?"),
    )

    conversation.run()

    assert conversation.data("state.transitioned") == [
        StateTransitioned(
            from_state="intake",
            to_state="step",
            reason="intervention 'good' starts at step 'welcome'",
            source="intervention",
        )
    ]
    assert conversation.bodies() == [
        "Hi Ana! Ready to start?",
        "Great! What would you like to change?",
    ]
    assert [m.kind for m in conversation.queued()] == ["greeting", "reply"]
    row = conversation.participant()
    assert (row["conversation_state"], row["current_step"]) == ("step", "explore")
    assert row["judgements"] == {"risk": {"level": "none"}, "ready": {"answer": "yes"}}
    judged = conversation.fake.requests[1]
    assert judged.body["model"] == "fast-model"
    assert judged.body["response_format"]["json_schema"]["name"] == "ReadyResult"
    report = rebuild(conversation.store)
    compare(conversation.store, report)
    assert report.clean, [d.describe() for d in report.differences]
