"""What a flagged message produces (bot/conversation/crisis.py): the safety text says a team was
alerted only when one was, the alert names the rule and never the message."""

from __future__ import annotations

from bot.conversation.crisis import ALERTED_TEXT, continue_note, crisis_events, safety_text
from bot.conversation.safety import ScreenResult
from bot.store.event_types.alerts import AlertRaised

MESSAGE = "Please call {helpline}. {alerted} You are not alone."


def test_the_safety_text_says_the_team_was_alerted_only_when_it_was():
    alerted = safety_text(MESSAGE, "  988  ", alerted=True)
    assert alerted == f"Please call 988. {ALERTED_TEXT} You are not alone."
    assert safety_text(MESSAGE, "988", alerted=False) == "Please call 988. You are not alone."


def test_the_note_for_a_turn_after_the_safety_message_says_whether_anyone_was_alerted():
    assert "and the study team was alerted." in continue_note("Call 988.", alerted=True)
    unalerted = continue_note("Call 988.", alerted=False)
    assert "nobody on the study team could be alerted, so do not say they were" in unalerted
    assert '"Call 988."' in unalerted


def test_the_alert_names_the_rule_and_category_and_the_message_goes_to_the_participant():
    participant = {"participant_id": "p-1", "phone": "+14155552671", "channel": "sms"}
    screened = ScreenResult(True, "en.suicide", "suicide", "en", "kill myself")

    alert, *sent = crisis_events(participant, screened, "Call 988.")

    assert isinstance(alert, AlertRaised)
    assert (alert.kind, alert.severity, alert.rule, alert.notify_supervisors) == (
        "crisis",
        "critical",
        "en.suicide",
        True,
    )
    assert "rule en.suicide, category suicide" in alert.summary
    assert "kill myself" not in alert.summary
    assert [(e.body, e.kind, e.to_address) for e in sent] == [
        ("Call 988.", "notice", "+14155552671")
    ]
