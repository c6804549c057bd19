"""Decision events round-trip through encode/decode and seal what describes the participant."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.store.event_types.decisions import DecisionFailed, DecisionMade, DecisionOutcome
from bot.store.events import decode, encode
from bot.store.personal import personal_fields

MADE = DecisionMade(
    intervention="walk-mrt",
    decision="walk_prompt",
    index=3,
    scheduled_for=datetime(2026, 12, 7, 9, 41, tzinfo=UTC),
    available=True,
    probabilities={"nothing": 0.4, "suggest": 0.6},
    option="suggest",
    u=0.52,
    moderators={"stress": 7},
    seed="sha256:ab12",
    options=["nothing", "suggest"],
)


def test_a_decision_made_round_trips_through_its_stored_form() -> None:
    assert decode("decision.made", 1, encode(MADE)) == MADE


def test_an_outcome_and_a_failure_round_trip_through_their_stored_form() -> None:
    outcome = DecisionOutcome(decision="walk_prompt", index=3, status="observed", value=True)
    failed = DecisionFailed(decision="walk_prompt", index=4, reason="the sum is 1.2, not 1")
    assert decode("decision.outcome", 1, encode(outcome)) == outcome
    assert decode("decision.failed", 1, encode(failed)) == failed


def test_moderators_and_outcome_values_are_sealed_and_the_design_is_plain() -> None:
    assert personal_fields(DecisionMade) == {"moderators"}
    assert personal_fields(DecisionOutcome) == {"value"}
    assert "probabilities" in DecisionMade.plain and "option" in DecisionMade.plain
