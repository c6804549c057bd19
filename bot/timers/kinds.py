"""Timer kinds and their policies: how late a timer may still fire, and what quiet hours do."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Literal

QuietPolicy = Literal["defer", "skip", "ignore"]


@dataclass(frozen=True)
class KindPolicy:
    """What the firing path does with a timer of this kind.

    `grace`: a timer found more than this late (the process was down) is skipped as "missed";
    None fires it however late. `quiet_hours`: a timer due inside quiet hours is deferred to
    their end, skipped, or fired anyway (for timers that send nothing). `cancelled_by_reply`:
    an inbound message cancels a pending timer of this kind. `records_inactive`: it fires
    for a paused, opted-out or withdrawn participant too, and a pause, opt-out or withdrawal
    leaves it pending (a decision point records that they were unavailable, and why).
    """

    kind: str
    grace: timedelta | None
    quiet_hours: QuietPolicy
    cancelled_by_reply: bool = False
    summary: str = ""
    records_inactive: bool = False


KINDS: dict[str, KindPolicy] = {
    policy.kind: policy
    for policy in (
        KindPolicy("at", timedelta(hours=1), "defer", summary="a one-shot message at an instant"),
        KindPolicy(
            "daily", timedelta(hours=2), "defer", summary="one occurrence of a daily prompt"
        ),
        KindPolicy(
            "reminder",
            timedelta(minutes=30),
            "skip",
            cancelled_by_reply=True,
            summary="a reminder unless the participant replied to the prompt",
        ),
        KindPolicy("transition", None, "defer", summary="a delayed conversation transition"),
        KindPolicy(
            "measurement", timedelta(minutes=30), "skip", summary="a timed measurement question"
        ),
        KindPolicy(
            "alert_escalation",
            None,
            "ignore",
            summary="an alert sent again, wider, if nobody acknowledged it (texts staff only)",
        ),
        KindPolicy(
            "review_escalation",
            None,
            "ignore",
            summary="a review item nobody cleared becomes a crisis alert (texts staff only; "
            "fires for a paused, opted-out or withdrawn participant too)",
            records_inactive=True,
        ),
        KindPolicy(
            "turn_retry",
            None,
            "defer",
            cancelled_by_reply=True,
            summary="a failed turn tried again (the participant writing again supersedes it)",
        ),
        KindPolicy(
            "measurement_timeout",
            None,
            "ignore",
            summary="the end of a measurement's answer window (a reply that is not a valid "
            "answer leaves it open)",
        ),
        KindPolicy(
            "instrument",
            None,
            "defer",
            summary="an administration of an instrument starts (deferred past quiet hours, "
            "sent however late)",
        ),
        KindPolicy(
            "instrument_abandon",
            None,
            "defer",
            summary="an administration left unanswered for its `abandon_after_minutes` is "
            "abandoned, and the step's `abandoned.*` transitions run (deferred past quiet hours)",
        ),
        KindPolicy(
            "send",
            None,
            "defer",
            summary="a `send:` message of an intervention, rendered when it is sent",
        ),
        KindPolicy(
            "greeting",
            None,
            "defer",
            cancelled_by_reply=True,
            summary="the welcome of an enrollment made in the participant's quiet hours, at "
            "their end (a text from them first is answered instead)",
        ),
        KindPolicy(
            "stage2",
            None,
            "ignore",
            summary="a study's stage-2 re-randomisation is due (`stage2.at.after`; sends "
            "nothing itself)",
        ),
        KindPolicy(
            "decision",
            None,
            "ignore",
            summary="a micro-randomised decision point (it records quiet hours as unavailable)",
            records_inactive=True,
        ),
        KindPolicy(
            "decision_outcome",
            None,
            "ignore",
            summary="the end of a decision point's outcome window (records the outcome)",
            records_inactive=True,
        ),
    )
}
# A kind registered later (by the conversation engine) without a policy of its own.
DEFAULT = KindPolicy("*", timedelta(hours=1), "defer", summary="any other kind")


def policy_for(kind: str, policies: Mapping[str, KindPolicy] | None = None) -> KindPolicy:
    """The policy of `kind`, or the default one for kinds without a policy."""
    return (policies if policies is not None else KINDS).get(kind, DEFAULT)


RECORDING = ("active", "paused", "withdrawn")  # statuses a `records_inactive` kind fires for


def records(kind: str, status: object) -> bool:
    """Whether a timer of `kind` fires (or stays pending) for a participant of `status`."""
    return policy_for(kind).records_inactive and status in RECORDING


def with_grace(grace: Mapping[str, float | None]) -> dict[str, KindPolicy]:
    """The policies with grace periods overridden (seconds; None = fire however late)."""
    policies = dict(KINDS)
    for kind, seconds in grace.items():
        base = policies.get(kind, replace(DEFAULT, kind=kind))
        policies[kind] = replace(
            base, grace=None if seconds is None else timedelta(seconds=seconds)
        )
    return policies
