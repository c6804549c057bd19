"""Send-time rendering: the timer handler of a `send:` action with `after:` (or `repeat:`),
which renders the message when it is sent, with the data as they are then (a weekly summary
counts the check-ins answered that week, not those answered when it was scheduled). With
`freeze: true` the action renders when it runs and sends that text (the `at` kind).

The composition root registers the handler with the participant's intervention lookup, as it
does decision points'. A template that cannot be rendered at send time sends nothing: it is
`template.failed` with an operator alert (never the template's source, never a stale text).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bot.channel import outbound
from bot.conversation import timer_turns
from bot.conversation.timer_turns import FiredTimer, Handler
from bot.interventions.interpreter import context, judging
from bot.interventions.interpreter.failures import RunFailure, failure_events
from bot.interventions.language.intervention import Intervention
from bot.store.events import EventData

KIND = "send"
Lookup = Callable[[Mapping[str, Any]], Intervention | None]


def variables(intervention: Intervention, fired: FiredTimer) -> dict[str, Any]:
    """What a template sees at send time: the data (as conditions read them) now."""
    found = context.data(intervention, fired.participant, fired.now, list(fired.events))
    about = {"title": intervention.config.title, "version": intervention.config.version}
    return {**found, "trigger": "timer", "intervention": about}


def send_handler(lookup: Lookup) -> Handler:
    """Render the `send:` template the timer names, now, and queue it."""

    def handle(fired: FiredTimer) -> list[EventData]:
        intervention = lookup(fired.participant)
        key = str(fired.payload.get("template") or "")
        if intervention is None or intervention.template(key) is None:
            return [fired.skipped("stale: no such template")]
        try:
            text = judging.render(intervention, key, variables(intervention, fired)).text
        except RunFailure as failure:
            step = fired.participant.get("current_step")
            return [fired.skipped("template failed"), *failure_events(intervention, failure, step)]
        kind = str(fired.payload.get("message_kind") or "notice")
        return list(outbound.to_participant(fired.participant, text, kind=kind))  # type: ignore[arg-type]

    return handle


def register(lookup: Lookup) -> None:
    """Make the conversation's timer turns render `send:` messages when they are sent."""
    timer_turns.register(KIND, send_handler(lookup))
