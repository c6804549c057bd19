"""The three lines of crisis detection together: phrase screen, learned line, LLM classifier.

The phrase screen always runs (the fast floor); the LLM classifier runs when an LLM is
configured (bot.conversation.classifier.both_lines); the learned line (bot.conversation.learned)
runs in the worker when SAFETY_LEARNED is on. Any line reaching its alert raises the crisis
alert, exactly as the phrase screen does. A learned crisis score in the review band records a
`safety.scored` event with band `review`, and the flow raises a review item for a person
(bot.conversation.reviews): the participant gets the normal reply. With the learned line on, a
phrase-screen hit must be confirmed: when its crisis score is under the model card's `confirm`
threshold (a message the model reads as a look-alike: an idiom, a past crisis, news) it is a
review item instead of an alert (`unconfirmed_rule`), unless the LLM classifier also flagged it.
With the learned line off, or failing, the phrase screen alerts alone, as the floor. Like the
LLM classifier, the learned line never blocks a turn: if it fails, the other lines decide.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from bot.conversation.classifier import SafetyClassifier, both_lines, screened_event
from bot.conversation.learned import LazyLine, LearnedLine, Thresholds, read_card, verdict_band
from bot.conversation.safety import EXTRA_RULE_ID, ScreenResult
from bot.core.config import Settings
from bot.store.event_types.safety import SafetyClassified, SafetyScored, SafetyScreened
from bot.store.events import EventData

RULE = "learned"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LearnedSetup:
    """The learned line (loaded on first use) and the thresholds it is judged by."""

    line: LazyLine
    thresholds: Thresholds

    @classmethod
    def configured(
        cls, settings: Settings, load: Callable[[], LearnedLine] | None = None
    ) -> LearnedSetup | None:
        """None when SAFETY_LEARNED is off; thresholds from the settings, else the model card's
        (chosen on the training corpus's cross-validation by `make safety-model`). `load`
        gives another line than the shipped model (any `LearnedLine`), loaded on first use."""
        if not settings.safety_learned:
            return None
        card = read_card().thresholds
        alert = settings.safety_alert_threshold
        review = settings.safety_review_threshold
        alert = card.alert if alert is None else alert
        review = card.review if review is None else review
        confirm = settings.safety_confirm_threshold
        confirm = card.confirm if confirm is None else confirm
        limits = Thresholds(alert, review, confirm or None)
        return cls(LazyLine() if load is None else LazyLine(load), limits)


def scored_event(setup: LearnedSetup, text: str, message_event_id: str) -> SafetyScored:
    """The learned line's verdict on one message, with its band."""
    verdict = setup.line.get().score(text)
    return SafetyScored(
        message_event_id=message_event_id,
        score=round(verdict.score, 4),
        review_score=None if verdict.review_score is None else round(verdict.review_score, 4),
        band=verdict_band(verdict, setup.thresholds),
        category=verdict.category,
        language=verdict.language,
        alert_threshold=setup.thresholds.alert,
        review_threshold=setup.thresholds.review,
        confirm_threshold=setup.thresholds.confirm,
        model_version=verdict.version,
    )


def three_lines(
    learned: LearnedSetup | None,
    classifier: SafetyClassifier | None,
    screened: ScreenResult,
    text: str,
    llm_text: str,
    message_event_id: str,
) -> tuple[ScreenResult, list[EventData]]:
    """The verdict the turn acts on and the events recording every line that ran. `text` is
    the message as received (the learned line runs locally); `llm_text` is what the LLM may
    see (bot.conversation.redaction)."""
    acted, events = both_lines(classifier, screened, llm_text, message_event_id)
    if learned is None or not text.strip():
        return acted, events
    try:
        scored = scored_event(learned, text, message_event_id)
    except Exception:  # a broken model install must not stop the turn: the other lines decide
        log.exception("the learned safety line failed; the phrase screen and LLM decide alone")
        return acted, events
    if not any(isinstance(e, SafetyScreened) for e in events):
        events = [screened_event(screened, message_event_id), *events]
    events.append(scored)
    classified = any(isinstance(e, SafetyClassified) and e.verdict == "crisis" for e in events)
    if not acted.crisis and scored.band == "alert":
        acted = ScreenResult(True, RULE, scored.category, scored.language, None)
    elif screened.crisis and not classified and unconfirmed(screened, scored, learned.thresholds):
        events[-1] = scored.model_copy(update={"band": "review", "unconfirmed_rule": screened.rule})
        acted = ScreenResult(crisis=False)
    return acted, events


def unconfirmed(screened: ScreenResult, scored: SafetyScored, thresholds: Thresholds) -> bool:
    """Whether a phrase-screen hit stays a review item: the learned line scored it under the
    confirm threshold. An intervention's own phrases (`extra_phrases`) always alert."""
    if thresholds.confirm is None or screened.rule == EXTRA_RULE_ID:
        return False
    return scored.score < min(thresholds.confirm, thresholds.alert)
