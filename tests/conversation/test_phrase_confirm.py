"""With the learned line on, a phrase-screen hit it scores under the confirm threshold is a
review item, not an alert; the phrase screen stays the floor when the learned line is off."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.conversation.classifier import Classification
from bot.conversation.learned import LazyLine, LearnedVerdict, Thresholds
from bot.conversation.reviews import review_events
from bot.conversation.safety import EXTRA_RULE_ID, ScreenResult
from bot.conversation.safety_lines import LearnedSetup, three_lines
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.safety import SafetyClassified, SafetyScored

HIT = ScreenResult(True, "en.suicide.die", "suicide", "en", "could die")
LIMITS = Thresholds(alert=0.9, review=0.6, confirm=0.3)


class Fixed:
    """A learned line that gives every message the same crisis score."""

    version = "v-test"

    def __init__(self, score: float) -> None:
        self.value = score

    def score(self, text: str) -> LearnedVerdict:
        return LearnedVerdict(self.value, "suicide", "en", self.version)


def _setup(score: float, limits: Thresholds = LIMITS) -> LearnedSetup:
    return LearnedSetup(LazyLine(lambda: Fixed(score)), limits)


def _scored(events: list) -> SafetyScored:
    (scored,) = [e for e in events if isinstance(e, SafetyScored)]
    return scored


def test_an_unconfirmed_phrase_hit_is_a_review_item_not_an_alert() -> None:
    acted, events = three_lines(_setup(0.05), None, HIT, "so bored i could die", "x", "m1")

    assert not acted.crisis
    scored = _scored(events)
    assert (scored.band, scored.unconfirmed_rule, scored.confirm_threshold) == (
        "review",
        "en.suicide.die",
        0.3,
    )


@pytest.mark.parametrize(("score", "band"), [(0.3, "none"), (0.7, "review"), (0.95, "alert")])
def test_a_confirmed_phrase_hit_alerts_as_the_phrase_screen_says(score: float, band: str) -> None:
    acted, events = three_lines(_setup(score), None, HIT, "i want to die", "x", "m1")

    assert acted == HIT
    scored = _scored(events)
    assert (scored.band, scored.unconfirmed_rule) == (band, None)


def test_without_the_learned_line_or_a_confirm_threshold_every_phrase_hit_alerts() -> None:
    off, _ = three_lines(None, None, HIT, "i could die", "x", "m1")
    no_confirm = _setup(0.05, Thresholds(alert=0.9, review=0.6))
    unconfirmed, events = three_lines(no_confirm, None, HIT, "i could die", "x", "m1")

    assert off == HIT and unconfirmed == HIT
    assert _scored(events).band == "none"


def test_an_interventions_own_phrase_always_alerts() -> None:
    extra = ScreenResult(True, EXTRA_RULE_ID, "custom", "any", "red flag")

    acted, events = three_lines(_setup(0.05), None, extra, "red flag", "x", "m1")

    assert acted == extra and _scored(events).unconfirmed_rule is None


class Alarmed:
    """An LLM classifier that flags every message."""

    def classify(self, text: str, message_event_id: str) -> Classification:
        verdict = SafetyClassified(message_event_id=message_event_id, verdict="crisis")
        return Classification(verdict, ())


def test_a_phrase_hit_the_llm_classifier_also_flags_alerts_whatever_the_score() -> None:
    acted, events = three_lines(_setup(0.05), Alarmed(), HIT, "i could die", "x", "m1")  # type: ignore[arg-type]

    assert acted == HIT and _scored(events).unconfirmed_rule is None


def test_the_review_item_names_the_phrase_rule_that_was_not_confirmed() -> None:
    _, events = three_lines(_setup(0.05), None, HIT, "so bored i could die", "x", "m1")
    participant = {"participant_id": "p1", "timezone": "UTC"}
    now = datetime(2026, 12, 7, 18, tzinfo=UTC)

    item, _ = review_events(participant, _scored(events), timedelta(minutes=60), now)

    assert isinstance(item, AlertRaised) and item.severity == "review"
    assert item.rule == "en.suicide.die"
    assert "under its confirm threshold 0.3" in item.summary
