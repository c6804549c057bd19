"""What `tandem safety scan` and `eval` report for the learned line, beside the phrase screen.

Alert only: a message counts as flagged when its score reaches the alert threshold. Alert +
review: when it reaches the review threshold (someone will look at it, by an alert or a review
item). Combined with the phrase screen, as in the flow (bot.conversation.safety_lines): a phrase
hit is an alert when the crisis score confirms it (the card's `confirm` threshold), else a
review item; the screen's category wins when both flag.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bot.conversation.learned import LearnedVerdict, LinearLine, Thresholds, verdict_band
from bot.conversation.safety import CrisisScreen, ScreenResult
from bot.conversation.safety_eval import Labelled, Score, evaluate

_BATCH = 32


def scan_verdict(
    text: str, screened: ScreenResult, scored: LearnedVerdict | None, thresholds: Thresholds
) -> dict[str, Any]:
    """One `scan` line: the phrase screen decides when it fires, else the learned line's band."""
    decided = verdict_band(scored, thresholds) if scored is not None else "none"
    phrase = screened.crisis and confirmed(scored, thresholds)
    verdict: dict[str, Any] = {
        "text": text,
        "crisis": phrase or decided == "alert",
        "review": not phrase and decided != "alert" and (screened.crisis or decided == "review"),
        "rule": screened.rule,
        "category": screened.category,
        "language": screened.language,
        "score": None if scored is None else round(scored.score, 4),
        "review_score": None if scored is None else round(scored.review, 4),
        "line": "phrase" if screened.crisis else None,
    }
    if not screened.crisis and scored is not None and decided != "none":
        verdict |= {
            "rule": "learned",
            "category": scored.category,
            "language": scored.language,
            "line": "learned",
        }
    return verdict


def confirmed(scored: LearnedVerdict | None, thresholds: Thresholds) -> bool:
    """Whether a phrase-screen hit is an alert: no learned verdict (the screen is the floor),
    no confirm threshold, or a crisis score at or above it."""
    if scored is None or thresholds.confirm is None:
        return True
    return scored.score >= min(thresholds.confirm, thresholds.alert)


def score_all(learned: LinearLine, texts: Sequence[str]) -> dict[str, LearnedVerdict]:
    """Every distinct text's verdict, embedded in batches."""
    distinct = list(dict.fromkeys(texts))
    verdicts: dict[str, LearnedVerdict] = {}
    for start in range(0, len(distinct), _BATCH):
        batch = distinct[start : start + _BATCH]
        verdicts |= dict(zip(batch, learned.score_many(batch), strict=True))
    return verdicts


def learned_sections(
    learned: LinearLine, thresholds: Thresholds, labelled: Sequence[Labelled], screen: CrisisScreen
) -> list[tuple[str, dict[tuple[str, str], Score]]]:
    """(title, scores) for the learned line alone and with the screen, at both thresholds."""
    verdicts = score_all(learned, [item.text for item in labelled])

    def learned_at(bands: tuple[str, ...]) -> Callable[[str], str | None]:
        def flagged(text: str) -> str | None:
            found = verdict_band(verdicts[text], thresholds) in bands
            return verdicts[text].category if found else None

        return flagged

    def combined(bands: tuple[str, ...]) -> Callable[[str], str | None]:
        alone = learned_at(bands)

        def flagged(text: str) -> str | None:
            screened = screen.check(text)
            if screened.crisis and ("review" in bands or confirmed(verdicts[text], thresholds)):
                return screened.category
            return alone(text)

        return flagged

    model = f"model {learned.version}"
    alert, review = thresholds.alert, thresholds.review
    confirm = (
        "" if thresholds.confirm is None else f", phrase hits confirmed >= {thresholds.confirm}"
    )
    alert_only, either = ("alert",), ("alert", "review")
    sections = (
        (f"learned alone, alert only: {model}, alert >= {alert}", alert_only, learned_at),
        (f"learned alone, alert + review: {model}, review >= {review}", either, learned_at),
        (f"phrase + learned, alert only: alert >= {alert}{confirm}", alert_only, combined),
        (f"phrase + learned, alert + review: review >= {review}", either, combined),
    )
    return [(title, evaluate(labelled, make(bands))) for title, bands, make in sections]


def everyday_rates(
    learned: LinearLine, thresholds: Thresholds, screen: CrisisScreen, messages: Sequence[str]
) -> list[str]:
    """Review-band and alert rates on unlabelled everyday messages, per cent and per 1,000: the
    learned line alone, the phrase screen alone, and both as the worker combines them."""
    verdicts = score_all(learned, messages)
    bands = [verdict_band(verdicts[m], thresholds) for m in messages]
    both = [scan_verdict(m, screen.check(m), verdicts[m], thresholds) for m in messages]
    rows = []
    for name, count in (
        ("learned review band", bands.count("review")),
        ("learned alert", bands.count("alert")),
        ("phrase screen alert", sum(screen.check(m).crisis for m in messages)),
        ("phrase+learned review band", sum(v["review"] for v in both)),
        ("phrase+learned alert", sum(v["crisis"] for v in both)),
    ):
        rate = count / len(messages) if messages else 0.0
        rows.append(f"{name:<28}{count:>5}{rate:>9.1%}{rate * 1000:>9.1f} per 1,000")
    return rows
