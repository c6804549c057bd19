"""Simulated participants on the sandbox's engine (bot.sandbox.cohort): personas are told what
each participant is sent, at the clock's time, and their replies are recorded as the webhook
records them; the clock jumps from timer to timer; ids follow from the seed."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.config import load_settings
from bot.sandbox.cohort import Cohort, CohortError, Delivered
from bot.store.event_types.interventions import MeasurementRecorded

WALK = Path(__file__).resolve().parents[2] / "interventions" / "walk-mrt"
START = datetime(2026, 3, 2, 6, 0, tzinfo=UTC)
SETTINGS = load_settings({"SAFETY_CLASSIFIER": "off"}, env_file=None)


class Rater:
    """Answers the morning stress question with its number; keeps what it was sent."""

    def __init__(self, rating: int) -> None:
        self.rating, self.got = rating, list[Delivered]()

    def receive(self, message: Delivered) -> str | None:
        self.got.append(message)
        return str(self.rating) if "How stressed" in message.text else None


def test_personas_get_their_messages_on_time_and_their_replies_are_recorded() -> None:
    raters = [Rater(3), Rater(8)]
    with Cohort(SETTINGS, str(WALK), raters, START, seed=5) as cohort:
        cohort.enroll()
        cohort.run_until(START + timedelta(hours=2))
        assert cohort.clock.now() == START + timedelta(hours=2)
        for n, rater in enumerate(raters):
            asked = [m for m in rater.got if "How stressed" in m.text]
            assert [m.at for m in asked] == [START + timedelta(hours=1, minutes=30)]
            assert {m.participant_id for m in rater.got} == {cohort.participant_ids[n]}
            recorded = [e.data for e in cohort.events(n) if isinstance(e.data, MeasurementRecorded)]
            assert [(r.measurement, r.value) for r in recorded] == [("stress", rater.rating)]


def test_participant_ids_follow_from_the_seed() -> None:
    with Cohort(SETTINGS, str(WALK), [], START, seed=5) as five:
        ids = [five.participant_id(n) for n in range(3)]
    with Cohort(SETTINGS, str(WALK), [], START, seed=5) as again:
        assert [again.participant_id(n) for n in range(3)] == ids
        assert len(set(ids)) == 3
    with Cohort(SETTINGS, str(WALK), [], START, seed=6) as six:
        assert six.participant_id(0) not in ids


def test_an_intervention_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "walk-mrt"
    shutil.copytree(WALK, broken)
    decision = broken / "decisions" / "walk_prompt.md"
    decision.write_text(decision.read_text().replace("probability: 0.6", "probability: 0.8"))
    with pytest.raises(CohortError, match="walk_prompt.md:"):
        Cohort(SETTINGS, str(broken), [], START)
