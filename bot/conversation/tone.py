"""Tone adaptation (pure): 15 whitelisted tags, explicit and implicit (EMA) updates, decay,
exclusive pairs, hysteresis, and the `<TONE POLICY>` block for system prompts.

Reproduces PromptPipe's `internal/tone` (reference §5.6), with two deliberate differences:
active tags are kept in whitelist order (Go returns them in random map order), and the guide
is returned without the surrounding blank lines (the caller joins prompt parts).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

Source = Literal["explicit", "implicit"]

TAGS = (
    # style
    "concise",
    "detailed",
    "formal",
    "casual",
    "no_emojis",
    "emojis_ok",
    "bullet_points",
    "one_question_at_a_time",
    # stance
    "warm_supportive",
    "neutral_professional",
    "direct_coach",
    "gentle_coach",
    # interaction
    "confirm_before_acting",
    "default_actionable",
    "high_autonomy",
)
EXCLUSIVE_PAIRS = (("concise", "detailed"), ("formal", "casual"), ("direct_coach", "gentle_coach"))
ALPHA = 0.15
ACTIVATE = 0.7
DEACTIVATE = 0.4
MIN_IMPLICIT_INTERVAL = timedelta(minutes=3)
PROFILE_FIELDS = (
    "tone_tags",
    "tone_scores",
    "tone_version",
    "tone_last_updated_at",
    "tone_update_source",
)


def clamp(value: float) -> float:
    """Clamp to [0, 1] and round half away from zero to 4 decimals (against float drift)."""
    bounded = min(max(float(value), 0.0), 1.0)
    return math.floor(bounded * 10000 + 0.5) / 10000


@dataclass(frozen=True)
class Proposal:
    """A cleaned proposal: known tags only, deduplicated; `dropped` lists what was removed."""

    tags: tuple[str, ...]
    source: Source = "implicit"
    scores: Mapping[str, float] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()


def validate(
    tags: Iterable[str],
    source: str | None = None,
    scores: Mapping[str, float] | None = None,
) -> Proposal:
    """Lowercase and trim tags, drop unknown ones and duplicates, clamp scores; no source means
    implicit."""
    kept: list[str] = []
    dropped: list[str] = []
    for raw in tags:
        tag = str(raw).strip().lower()
        if tag in TAGS:
            if tag not in kept:
                kept.append(tag)
        else:
            dropped.append(str(raw))
    cleaned = {
        key.strip().lower(): clamp(value)
        for key, value in (scores or {}).items()
        if key.strip().lower() in TAGS
    }
    chosen: Source = "explicit" if source == "explicit" else "implicit"
    return Proposal(tuple(kept), chosen, cleaned, tuple(dropped))


@dataclass(frozen=True)
class Tone:
    """The tone part of a profile: active tags, scores, and when and how it last changed."""

    tags: tuple[str, ...] = ()
    scores: Mapping[str, float] = field(default_factory=dict)
    version: int = 1
    last_updated_at: datetime | None = None
    update_source: Source | None = None

    @classmethod
    def from_profile(cls, profile: Mapping[str, Any]) -> Tone:
        """Read the tone fields of a stored profile, ignoring anything malformed."""
        tags = profile.get("tone_tags") or []
        scores = profile.get("tone_scores") or {}
        source = profile.get("tone_update_source")
        return cls(
            tags=tuple(t for t in TAGS if isinstance(tags, list) and t in tags),
            scores={
                k: clamp(v)
                for k, v in (scores.items() if isinstance(scores, Mapping) else ())
                if k in TAGS and isinstance(v, int | float)
            },
            last_updated_at=_instant(profile.get("tone_last_updated_at")),
            update_source=source if source in ("explicit", "implicit") else None,
        )

    def as_profile(self) -> dict[str, Any]:
        """The profile fields this tone is stored as (JSON-ready)."""
        return {
            "tone_tags": list(self.tags),
            "tone_scores": dict(self.scores),
            "tone_version": self.version,
            "tone_last_updated_at": (
                self.last_updated_at.isoformat() if self.last_updated_at else None
            ),
            "tone_update_source": self.update_source,
        }


@dataclass(frozen=True)
class Update:
    """The result of applying a proposal; when nothing changed, `reason` says why."""

    tone: Tone
    changed: bool
    reason: Literal["rate_limited", "no_tags", "unchanged"] | None = None


def apply(tone: Tone, proposal: Proposal, now: datetime) -> Update:
    """Apply a validated proposal at `now`: explicit sets scores at once; implicit is refused
    within 3 minutes of the last change, else moves observed tags by EMA and decays the rest."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    last = tone.last_updated_at
    if proposal.source == "implicit" and last is not None and now - last < MIN_IMPLICIT_INTERVAL:
        return Update(tone, False, "rate_limited")
    observed = {tag: 1.0 for tag in proposal.tags} | dict(proposal.scores)
    if not observed:
        return Update(tone, False, "no_tags")
    scores = dict(tone.scores)
    if proposal.source == "explicit":
        for tag, value in observed.items():
            scores[tag] = clamp(value)
    else:
        for tag, value in observed.items():
            scores[tag] = clamp((1 - ALPHA) * scores.get(tag, 0.0) + ALPHA * value)
        for tag, previous in list(scores.items()):
            if tag not in observed and previous > 0:
                scores[tag] = clamp((1 - ALPHA) * previous)
    if all(scores.get(tag, 0.0) == tone.scores.get(tag, 0.0) for tag in scores):
        return Update(tone, False, "unchanged")
    _enforce_exclusions(scores)
    return Update(
        Tone(
            tags=_active_tags(tone.tags, scores),
            scores={tag: scores[tag] for tag in TAGS if tag in scores},
            version=1,
            last_updated_at=now,
            update_source=proposal.source,
        ),
        True,
    )


def _enforce_exclusions(scores: dict[str, float]) -> None:
    """no_emojis >= 0.7 zeroes emojis_ok; of an exclusive pair both >= 0.7, the lower one (the
    second on a tie) drops to 0.39 so that it deactivates."""
    if scores.get("no_emojis", 0.0) >= ACTIVATE:
        scores["emojis_ok"] = 0.0
    for first, second in EXCLUSIVE_PAIRS:
        a, b = scores.get(first, 0.0), scores.get(second, 0.0)
        if a >= ACTIVATE and b >= ACTIVATE:
            scores[second if a >= b else first] = clamp(DEACTIVATE - 0.01)


def _active_tags(current: Iterable[str], scores: Mapping[str, float]) -> tuple[str, ...]:
    """Hysteresis: a tag activates at >= 0.7, deactivates at <= 0.4, and otherwise keeps its
    state; an active no_emojis removes emojis_ok."""
    active = set(current)
    for tag, score in scores.items():
        if score >= ACTIVATE:
            active.add(tag)
        elif score <= DEACTIVATE:
            active.discard(tag)
    if "no_emojis" in active:
        active.discard("emojis_ok")
    return tuple(tag for tag in TAGS if tag in active)


_STYLE_RULES = (
    ("concise", "- Be concise: short sentences, minimal filler."),
    ("detailed", "- Be detailed: provide slightly more explanation, but avoid rambling."),
    ("formal", "- Use formal diction and professional register."),
    ("casual", "- Use casual, friendly language."),
)
_STANCE_RULES = (
    ("warm_supportive", "- Adopt a warm, supportive stance. Encourage the user."),
    ("neutral_professional", "- Keep a neutral, professional stance."),
    ("direct_coach", "- Be a direct coach: clear, action-oriented feedback."),
    ("gentle_coach", "- Be a gentle coach: patient, encouraging guidance."),
)
_INTERACTION_RULES = (
    ("confirm_before_acting", "- Confirm with the user before taking actions."),
    ("default_actionable", "- Provide actionable next steps by default."),
    ("high_autonomy", "- Act with high autonomy; minimize confirmations."),
)


def guide(tags: Iterable[str]) -> str:
    """The `<TONE POLICY>` block for these active tags; "" when there are none."""
    active = {t for t in tags if t in TAGS}
    if not active:
        return ""
    lines = ["<TONE POLICY>", "Adapt your responses to the user's communication style:"]
    lines += [rule for tag, rule in _STYLE_RULES if tag in active]
    if "no_emojis" in active:
        lines.append("- Do NOT use emojis.")
    elif "emojis_ok" in active:
        lines.append("- Emojis are welcome where appropriate.")
    if "bullet_points" in active:
        lines.append("- Prefer bullet points when listing items.")
    if "one_question_at_a_time" in active:
        lines.append("- Ask only one question at a time.")
    stance = [rule for tag, rule in _STANCE_RULES if tag in active]
    lines += stance or ["- Keep a neutral, professional stance."]
    lines += [rule for tag, rule in _INTERACTION_RULES if tag in active]
    lines += ["- NEVER mirror hostility, sarcasm, insults, or unsafe language.", "</TONE POLICY>"]
    return "\n".join(lines)


def tone_guide(profile: Mapping[str, Any] | None) -> str:
    """The tone block for a participant's profile; "" when no tone tag is active."""
    return guide(Tone.from_profile(profile or {}).tags)


def _instant(value: Any) -> datetime | None:
    """A stored ISO timestamp as an aware datetime; None if absent, malformed or naive."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return parsed if parsed.tzinfo is not None else None
