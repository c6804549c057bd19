"""The participants row's version follows its stream even when an event changes nothing else."""

from __future__ import annotations

from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.timers import MeasurementMissed
from bot.store.events import participant_stream
from tests.factories import enrolled


def test_a_missed_measurement_nobody_was_asked_still_moves_the_version_and_appends_go_on(
    store: EventStore,
) -> None:
    data = enrolled()
    stream = participant_stream(data.participant_id)
    store.append(stream, [data])

    store.append(stream, [MeasurementMissed(measurement="mood", timer_id="t", outbox_id="o")])
    store.append(stream, [AlertRaised(alert_id="a-1", kind="crisis", summary="x")])

    row = store.projection_row("participants", data.participant_id)
    assert row["version"] == store.version(stream) == 3
