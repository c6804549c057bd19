"""The study overview: counts and charts drawn on the server, readable without JavaScript."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

from flask.testing import FlaskClient

from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import MeasurementRecorded
from bot.store.event_types.participants import ParticipantOptedOut, ParticipantWithdrawn
from bot.store.event_types.timers import MeasurementMissed
from bot.store.events import participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled, received


def test_the_overview_counts_statuses_messages_adherence_and_trouble(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    one, two = enrolled(name="Ada"), enrolled(phone="+14155552672", name="Bo")
    for data in (one, two):
        services.store.append(participant_stream(data.participant_id), [data])
    first = participant_stream(one.participant_id)
    services.store.append(first, [received(body="hi")])
    services.store.append(first, [MeasurementRecorded(measurement="mood", value=4)])
    services.clock.advance(timedelta(days=1))
    services.store.append(
        first, [MeasurementMissed(measurement="mood", timer_id="t", outbox_id="o")]
    )
    services.store.append(first, [AlertRaised(alert_id="a-1", kind="crisis", summary="x")])
    client = signed_in("researcher")

    page = get(client, "/console/study").get_data(as_text=True)

    assert re.search(r'id="open-alerts">1<', page)
    assert re.search(r'id="failed-sends">0<', page) and re.search(r'id="parked-work">0<', page)
    assert "50%" in page and "(1 of 2 active participants" in page
    assert "in: 1 · out: 0" in page
    assert "<h3>mood</h3>" in page and "answered 1 · missed 1" in page
    assert page.count("<svg") >= 4 and "<title>active: 2</title>" in page


def test_a_supervisor_cannot_open_the_overview(signed_in: Callable[[str], FlaskClient]) -> None:
    assert get(signed_in("supervisor"), "/console/study").status_code == 403


def test_the_response_rate_leaves_out_opted_out_and_withdrawn_participants(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    wrote = enrolled(name="Ada")
    stopped = enrolled(phone="+14155552672", name="Bo")
    gone = enrolled(phone="+14155552673", name="Cy")
    for data in (wrote, stopped, gone):
        services.store.append(participant_stream(data.participant_id), [data])
    services.store.append(participant_stream(wrote.participant_id), [received(body="hi")])
    services.store.append(
        participant_stream(stopped.participant_id), [ParticipantOptedOut(source="keyword")]
    )
    services.store.append(
        participant_stream(gone.participant_id),
        [ParticipantWithdrawn(reason="moved away", requested_by="participant")],
    )
    client = signed_in("researcher")

    page = get(client, "/console/study").get_data(as_text=True)

    assert re.search(r'id="response-rate">100%', page)
    assert "(1 of 1 active participants" in page and "opted-out" in page
