"""A failed turn is retried, not promised: the fallback promises nothing, a durable timer tries
again after 2, 10 and 30 minutes (across a restart), the real answer arrives once, the
participant writing again supersedes the retry, and after the last one the operators are
alerted. A failed greeting never reads as a reply."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from modules import intake
from tests.fakes.openai_api import ScriptedReply
from tests.scenarios.harness import SUPERVISOR, Harness

GREETING = "Hi Ana! I'm your habit coach. What would you like to work on?"
FALLBACK = intake.MODULE.prompt.fallback
ANSWER = "Walking is a great choice! When in the day would suit you?"
DOWN = ScriptedReply.error(503, "overloaded")
PROMISES = re.compile(r"get back|shortly|will (reply|answer)|try again", re.IGNORECASE)


def enrolled(make_harness: Callable[..., Harness], **env: str) -> Harness:
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR, **env)
    h.script(ScriptedReply.text(GREETING))
    assert h.enroll(name="Ana").status_code == 201
    return h


def test_the_llm_down_gets_a_fallback_and_the_retried_turn_delivers_the_answer_once(
    make_harness: Callable[..., Harness],
) -> None:
    h = enrolled(make_harness)
    h.script(DOWN)

    h.text("I want to walk more")

    assert h.outbound() == [GREETING, FALLBACK]
    assert not PROMISES.search(FALLBACK)
    (timer,) = h.timers(kind="turn_retry")
    assert timer["due_at"] == h.clock.now() + timedelta(minutes=2)
    h = h.restart()  # the retry is a durable timer: a new process picks it up
    h.script(ScriptedReply.text(ANSWER))

    h.advance(timedelta(minutes=2))

    assert h.outbound() == [GREETING, FALLBACK, ANSWER]
    retried = h.requests[-1].messages
    assert retried[-1] == {"role": "user", "content": "I want to walk more"}
    assert all(FALLBACK not in str(m.get("content")) for m in retried)
    assert [q.kind for q in h.data("message.queued")][-1] == "reply"
    h.advance(timedelta(hours=2))
    assert h.outbound() == [GREETING, FALLBACK, ANSWER]
    assert h.llm.pending == 0
    assert [t["status"] for t in h.timers(kind="turn_retry")] == ["fired"]


def test_after_the_last_retry_fails_the_operators_are_alerted_and_nothing_more_is_sent(
    make_harness: Callable[..., Harness],
) -> None:
    h = enrolled(make_harness)
    h.script(DOWN)
    h.text("I want to walk more")
    h.script(DOWN, DOWN, DOWN)

    h.advance(timedelta(minutes=2 + 10 + 30))

    assert h.outbound() == [GREETING, FALLBACK]
    timers = h.timers(kind="turn_retry")
    assert [t["payload"]["attempt"] for t in timers] == [1, 2, 3]
    gaps = [(b["due_at"] - a["due_at"]) for a, b in zip(timers, timers[1:], strict=False)]
    assert gaps == [timedelta(minutes=10), timedelta(minutes=30)]
    assert [f.fallback for f in h.data("turn.failed")] == [FALLBACK, None, None, None]
    (alert,) = h.data("alert.raised")
    assert (alert.kind, alert.notify_supervisors) == ("turn_failed", False)
    assert "4 times" in alert.summary
    assert h.outbound(SUPERVISOR) == []
    h.advance(timedelta(days=1))
    assert h.outbound() == [GREETING, FALLBACK] and h.llm.pending == 0


def test_writing_again_supersedes_the_retry_so_nothing_is_answered_twice(
    make_harness: Callable[..., Harness],
) -> None:
    h = enrolled(make_harness)
    h.script(DOWN)
    h.text("I want to walk more")
    h.script(ScriptedReply.text(ANSWER))

    h.text("hello? are you there?")

    assert h.outbound() == [GREETING, FALLBACK, ANSWER]
    shown = [m["content"] for m in h.requests[-1].messages if m["role"] == "user"]
    assert shown[-2:] == ["I want to walk more", "hello? are you there?"]
    (timer,) = h.timers(kind="turn_retry")
    assert timer["status"] == "cancelled"
    h.advance(timedelta(hours=1))
    assert h.outbound() == [GREETING, FALLBACK, ANSWER] and h.llm.pending == 0


def test_a_failed_greeting_sends_nothing_and_is_retried_as_a_greeting(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR)
    h.script(DOWN)
    assert h.enroll(name="Ana").status_code == 201

    assert h.outbound() == []
    (failed,) = h.data("turn.failed")
    assert failed.fallback is None
    h.script(ScriptedReply.text(GREETING))

    h.advance(timedelta(minutes=2))

    assert h.outbound() == [GREETING]
    assert [q.kind for q in h.data("message.queued")] == ["greeting"]


def test_a_greeting_failing_every_retry_ends_with_the_greeting_fallback_and_an_alert(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(SUPERVISOR_PHONES=SUPERVISOR)
    h.script(DOWN, DOWN, DOWN, DOWN)
    assert h.enroll(name="Ana").status_code == 201

    h.advance(timedelta(minutes=2 + 10 + 30))

    assert h.outbound() == [intake.MODULE.prompt.greeting_fallback]
    assert [q.kind for q in h.data("message.queued")] == ["greeting"]
    (alert,) = h.data("alert.raised")
    assert alert.kind == "turn_failed" and "the greeting" in alert.summary


def test_with_retries_off_the_fallback_is_all_and_nothing_is_scheduled(
    make_harness: Callable[..., Harness],
) -> None:
    h = enrolled(make_harness, TURN_RETRY_MINUTES="off")
    h.script(DOWN)

    h.text("I want to walk more")

    assert h.outbound() == [GREETING, FALLBACK]
    assert h.timers(kind="turn_retry") == []
    assert h.data("alert.raised") == []


def test_a_retried_turn_after_the_safety_reply_is_told_it_was_sent(
    make_harness: Callable[..., Harness],
) -> None:
    h = enrolled(make_harness, SAFETY_CONTINUE_TURN="true")
    h.script(DOWN)
    h.text("I want to kill myself")
    h.script(ScriptedReply.text("I'm here with you. Would you like to talk about it?"))

    h.advance(timedelta(minutes=2))

    notes = [m["content"] for m in h.requests[-1].messages if m["role"] == "system"]
    assert any("already been sent this message" in n for n in notes)
    assert any("the study team was alerted" in n for n in notes)
    assert h.outbound()[-1] == "I'm here with you. Would you like to talk about it?"
    assert len(h.outbound()) == 4  # greeting, safety reply, fallback, the retried answer
