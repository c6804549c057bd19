"""An enrolled participant with an open crisis alert, for the alert lifecycle tests."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.events import new_id, participant_stream
from tests.factories import enrolled


def participant_with_alert(store: EventStore, phone: str = "+14155552671") -> tuple[str, str]:
    """(participant_id, alert_id) of a new participant with one open crisis alert."""
    person = enrolled(phone)
    alert = AlertRaised(
        alert_id=new_id(),
        kind="crisis",
        severity="critical",
        rule="en.suicide.direct",
        summary="The crisis screen flagged a message.",
        notify_supervisors=True,
    )
    store.append(participant_stream(person.participant_id), [person, alert], 0)
    return person.participant_id, alert.alert_id
