"""Safety verdicts on one inbound message, one event per line of detection, so that a study can
report how each line performed: the phrase screen (`safety.screened`), the learned line
(`safety.scored`) and the LLM classifier (`safety.classified`). All refer to the message by its
event id, never quote it."""

from __future__ import annotations

from typing import Literal

from bot.store.events import EventData, event, fields


@event("safety.screened")
class SafetyScreened(EventData):
    """The deterministic phrase screen's verdict (recorded beside a classifier verdict)."""

    personal = fields()
    plain = fields("rule", "category", "language")

    message_event_id: str
    crisis: bool
    rule: str | None = None
    category: str | None = None
    language: str | None = None


@event("safety.classified")
class SafetyClassified(EventData):
    """The LLM classifier's verdict: `crisis`, `none`, or `no_verdict` when the call failed or
    its output did not validate (`error` says why; the screen then decided alone). The
    model's `reason` and an `error` (which may quote its output) can repeat the participant's
    words: they are personal."""

    personal = fields("reason", "error")
    plain = fields("category", "severity")

    message_event_id: str
    verdict: Literal["crisis", "none", "no_verdict"]
    category: str | None = None
    severity: str | None = None
    reason: str | None = None
    error: str | None = None
    call_id: str | None = None
    latency_ms: float | None = None


@event("safety.scored")
class SafetyScored(EventData):
    """The learned line's verdict (bot.conversation.learned): its crisis score, its review score
    (None for a model without one: the crisis score stands for it), the band it falls in
    (`alert` raised a crisis alert, `review` asks a person to look, `none`), the most likely
    category and language, the thresholds applied and the model version that scored. When the
    phrase screen matched but the crisis score stayed under `confirm_threshold`, the band is
    `review` and `unconfirmed_rule` names the phrase rule that did not become an alert."""

    personal = fields()
    plain = fields("line", "category", "language", "band", "model_version", "unconfirmed_rule")

    message_event_id: str
    line: str = "learned"
    score: float
    review_score: float | None = None
    band: Literal["alert", "review", "none"]
    category: str | None = None
    language: str | None = None
    alert_threshold: float
    review_threshold: float
    model_version: str
    confirm_threshold: float | None = None
    unconfirmed_rule: str | None = None
