"""A question is asked once: a step entered again before its question went out (a worker
starting, or down, while the participant writes) replaces the ask that was not yet sent, on the
real engine with the demo intervention, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from tests.scenarios.harness import Harness

TOPICS = (
    "What would you like a tip about? Reply with a number:\n1. Sleep\n2. Moving more\n3. Stress"
)


def test_a_message_before_the_question_went_out_still_gets_the_question_once(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness(INTERVENTION="demo")
    h.enroll(settle=False)
    while h.worker.run_once():  # the greeting turn; the question's timer is due but not fired
        pass
    h.deliver("hello")
    while h.worker.run_once():
        pass

    h.settle()  # now the scheduler fires what is due

    assert h.outbound().count(TOPICS) == 1, h.outbound()
    assert [c.reason for c in h.data("timer.cancelled")] == ["asked again"]
    asked = h.data("measurement.asked")
    assert len(asked) == 1 and asked[0].measurement == "topic"
    pending = h.timers(kind="measurement", status="scheduled")
    assert pending == []
