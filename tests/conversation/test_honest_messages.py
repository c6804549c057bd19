"""{alerted} in an intervention's own wording says the team was told only when it was."""

from __future__ import annotations

from pathlib import Path

from bot.conversation.crisis import ALERTED_TEXT, honest_messages
from bot.store.event_types.messages import MessageQueued

SAY = "I'm an automated coach. {alerted} If you are in danger, call your emergency number."


def queued(body: str, to_participant: bool = True) -> MessageQueued:
    return MessageQueued(
        outbox_id="o1",
        to_address="+14165550123",
        channel="sms",
        body=body,
        to_participant=to_participant,
    )


def test_with_a_supervisor_route_the_placeholder_says_the_team_was_alerted() -> None:
    (message,) = honest_messages([queued(SAY)], alerted=True)
    assert message.body == SAY.replace("{alerted}", ALERTED_TEXT)


def test_without_a_supervisor_route_it_says_nothing_about_the_team() -> None:
    (message,) = honest_messages([queued(SAY)], alerted=False)
    assert message.body == (
        "I'm an automated coach. If you are in danger, call your emergency number."
    )


def test_messages_without_the_placeholder_are_left_as_they_are() -> None:
    plain = queued("Hello {name}")
    assert honest_messages([plain], alerted=False) == [plain]


def test_the_shipped_interventions_claim_no_alert_in_their_own_words() -> None:
    root = Path(__file__).resolve().parents[2] / "interventions"
    claims = ("let the study team know", "notified", "i've told", "flagged to the study team")
    for path in root.rglob("*.md"):
        text = path.read_text(encoding="utf-8").lower()
        assert not any(claim in text for claim in claims), path
