"""The learned crisis line in the worker's flow: its alert, its review band, its events."""

from __future__ import annotations

from collections.abc import Callable

from bot.conversation.learned import read_card
from tests.conversation.flow.conftest import SUPERVISOR, Conversation
from tests.fakes.openai_api import ScriptedReply

# The phrase screen has no rule for this: only a line that reads meaning can catch it.
UNPHRASED = "we walked the dog by the river"


def test_a_message_only_the_learned_line_catches_raises_the_crisis_alert(
    make_conversation: Callable[..., Conversation],
) -> None:
    # Alert threshold 0: every score reaches it, so the alert can only come from this line.
    conversation = make_conversation(SAFETY_ALERT_THRESHOLD="0")
    conversation.enroll(source="auto")
    conversation.receive(UNPHRASED)

    conversation.run()

    (screened,) = conversation.data("safety.screened")
    assert not screened.crisis
    (scored,) = conversation.data("safety.scored")
    assert (scored.band, scored.line, scored.model_version) == (
        "alert",
        "learned",
        read_card().version,
    )
    (alert,) = conversation.data("alert.raised")
    assert (alert.kind, alert.rule) == ("crisis", "learned")
    assert "learned" in alert.summary
    (text,) = conversation.queued("alert")
    assert text.to_address == SUPERVISOR
    assert conversation.queued("notice")  # the safety message, as for the phrase screen
    assert conversation.fake.requests == []


def test_a_review_band_score_records_a_review_verdict_a_review_item_and_the_normal_reply(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation(SAFETY_ALERT_THRESHOLD="1", SAFETY_REVIEW_THRESHOLD="0")
    conversation.enroll(source="auto")
    conversation.receive(UNPHRASED)
    conversation.fake.script(ScriptedReply.text("Lovely walk!"))

    conversation.run()

    (scored,) = conversation.data("safety.scored")
    assert (scored.band, scored.alert_threshold, scored.review_threshold) == ("review", 1.0, 0.0)
    assert 0.0 <= scored.score < 1.0
    # The shipped card reads the review band from the crisis score: no second score.
    assert read_card().raw["review_on"] == "crisis" and scored.review_score is None
    (item,) = conversation.data("alert.raised")  # for a person: tests/.../test_review_items.py
    assert (item.kind, item.severity, item.notify_supervisors) == ("review", "review", False)
    assert conversation.bodies() == ["Lovely walk!"]


def test_with_default_thresholds_an_everyday_message_is_scored_below_the_review_band(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation()  # the default: on
    conversation.enroll(source="auto")
    conversation.receive("did my 20 min walk after lunch, felt good")
    conversation.fake.script(ScriptedReply.text("Great!"))

    conversation.run()

    (scored,) = conversation.data("safety.scored")
    card = read_card().thresholds
    assert (scored.band, scored.alert_threshold, scored.review_threshold) == (
        "none",
        card.alert,
        card.review,
    )
    assert conversation.data("alert.raised") == []


def test_with_the_learned_line_off_no_score_is_recorded(
    make_conversation: Callable[..., Conversation],
) -> None:
    conversation = make_conversation(SAFETY_LEARNED="off")
    conversation.enroll(source="auto")
    conversation.receive(UNPHRASED)
    conversation.fake.script(ScriptedReply.text("Nice."))

    conversation.run()

    assert conversation.data("safety.scored") == []
    assert conversation.bodies() == ["Nice."]
