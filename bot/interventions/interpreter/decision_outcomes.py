"""A decision point's proximal outcome, read from the participant's events when its window
closes (docs/decisions.md): a reply within the window (yes/no, or its latency in minutes),
the answer to the question asked after the delay (missing if none came), or the count of
messages received or sent. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.interventions.language.decisions_format import Outcome
from bot.store.event_types.decisions import DecisionOutcome
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.messages import MessageQueued, MessageReceived
from bot.store.events import Event

YES = ("yes", "y", "1", "true")


def outcome_of(
    outcome: Outcome,
    decision: str,
    index: int,
    made_at: datetime,
    closes: datetime,
    history: Sequence[Event],
) -> DecisionOutcome:
    """What happened between the point (`made_at`) and the window's end (`closes`)."""
    window = [ev for ev in history if made_at < ev.occurred_at <= closes]
    received = [ev for ev in window if isinstance(ev.data, MessageReceived)]
    latency = (received[0].occurred_at - made_at).total_seconds() if received else None
    found = DecisionOutcome(
        decision=decision, index=index, status="observed", latency_seconds=latency
    )
    if outcome.reply == "yes/no":
        return found.model_copy(update={"value": bool(received)})
    if outcome.reply == "latency":
        if latency is None:
            return found.model_copy(update={"status": "missing"})
        return found.model_copy(update={"value": latency / 60})
    if outcome.count == "received":
        return found.model_copy(update={"value": len(received)})
    if outcome.count == "sent":
        sent = [
            ev for ev in window if isinstance(ev.data, MessageQueued) and ev.data.to_participant
        ]
        return found.model_copy(update={"value": len(sent)})
    if outcome.ask is not None:
        answers = [
            ev.data.value
            for ev in window
            if isinstance(ev.data, MeasurementRecorded) and ev.data.measurement == outcome.ask
        ]
        if answers:
            return found.model_copy(update={"value": answers[-1]})
    return found.model_copy(update={"status": "missing"})  # a judgement is not read yet


def as_number(value: object) -> float | None:
    """An outcome's value for the analysis: yes/no as 1/0, numbers as they are."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in YES:
            return 1.0
        if text in ("no", "n", "0", "false"):
            return 0.0
        try:
            return float(text)
        except ValueError:
            return None
    return None
