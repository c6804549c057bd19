"""The Decisions page: availability, options chosen against their logged probabilities, outcomes
by option, and the drift warning, for a researcher."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from flask.testing import FlaskClient

from bot.store.event_types.decisions import DecisionMade, DecisionOutcome
from bot.store.events import EventData, participant_stream
from bot.store.services import Services
from tests.console.conftest import get
from tests.factories import enrolled

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _record(services: Services, drawn: float) -> None:
    """40 participants x 10 points logging p(suggest) = 0.6, chosen with `drawn`."""
    rng = random.Random(4)
    for n in range(40):
        person = enrolled(phone=f"+1415555{n:04d}", intervention="walk-mrt")
        events: list[EventData] = [person]
        for i in range(10):
            if i == 0:
                events.append(DecisionMade(
                    decision="walk_prompt", index=i, scheduled_for=T0, available=False,
                    unavailable_reason="quiet_hours",
                ))  # fmt: skip
                continue
            option = "suggest" if rng.random() < drawn else "nothing"
            events.append(DecisionMade(
                decision="walk_prompt", index=i, scheduled_for=T0 + timedelta(hours=i),
                available=True, probabilities={"nothing": 0.4, "suggest": 0.6}, option=option,
                u=0.5, options=["nothing", "suggest"],
            ))  # fmt: skip
            walked = rng.random() < (0.5 if option == "suggest" else 0.2)
            events.append(
                DecisionOutcome(decision="walk_prompt", index=i, status="observed", value=walked)
            )
        services.store.append(participant_stream(person.participant_id), events)


def test_the_page_shows_availability_choices_and_outcomes_without_a_warning_for_honest_draws(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    _record(services, 0.6)
    page = get(signed_in("researcher"), "/console/decisions").get_data(as_text=True)
    assert 'id="decision-walk_prompt"' in page
    assert "400 points, 360 available (90%)" in page and "quiet_hours 40" in page
    assert "<td>216.0</td>" in page  # suggest's expected count: 360 x 0.6
    assert 'id="option-walk_prompt-nothing"' in page and 'id="drift-walk_prompt"' not in page


def test_choices_made_with_other_probabilities_than_logged_raise_the_drift_warning(
    signed_in: Callable[[str], FlaskClient], services: Services
) -> None:
    _record(services, 0.85)
    page = get(signed_in("researcher"), "/console/decisions").get_data(as_text=True)
    assert 'id="drift-walk_prompt"' in page and "tandem decisions check walk_prompt" in page
