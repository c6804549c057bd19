"""Allocating enrolled participants to a study's arms, in the transaction that enrolls them."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

from bot.runtime.routing import intervention_catalogue
from bot.services.allocation import allocated, factor_names
from bot.store import replay
from bot.store.allocations import arm_counts, study_allocations
from bot.store.event_store import EventStore
from bot.store.event_types import ParticipantEnrolled
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.events import new_id, participant_stream
from bot.studies.audit import check_allocations
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.studies.format import Study
from bot.studies.seed import seed_fingerprint, study_seed
from tests.conftest import TEST_MASTER_KEY

SLUG = "walk-pilot"


@pytest.fixture(scope="module")
def study() -> Study:
    return StudyCatalogue(STUDIES, intervention_catalogue()).study(SLUG)


def enroll(store: EventStore, study: Study, level: str, number: int) -> ParticipantAllocated:
    """One enrollment into the study: the participant's events and allocation together."""
    pid = new_id()
    seed = study_seed(SLUG, TEST_MASTER_KEY)
    baseline = {"activity_level": level, "age": 30 + number % 40}
    with store.transaction() as tx:
        allocation = allocated(tx, SLUG, study, seed, pid, baseline)
        arm = study.arms[allocation.arm]
        enrolled = ParticipantEnrolled(
            participant_id=pid,
            phone=f"+1415555{number:04d}",
            timezone="America/Toronto",
            intervention=arm.intervention,
        )
        tx.append(participant_stream(pid), [enrolled, allocation], expected_version=0)
    return allocation


def test_forty_enrollments_are_balanced_within_each_stratum_at_every_block_end(
    store: EventStore, study: Study
) -> None:
    made = [enroll(store, study, "low" if n % 3 else "high", n) for n in range(40)]

    for stratum in {a.stratum for a in made}:
        within = [a for a in made if a.stratum == stratum]
        ends = [i for i, a in enumerate(within) if a.position == a.block_size]
        assert ends, "at least one block ended in each stratum"
        for end in ends:
            counts = Counter(a.arm for a in within[: end + 1])
            assert counts["coach"] == counts["control"], (stratum, end, counts)
    with store.reading() as conn:
        rows = study_allocations(conn, SLUG)
        counts = arm_counts(conn, SLUG)
    assert [r["participant_id"] for r in rows] == [
        r["participant_id"] for r in sorted(rows, key=lambda r: r["seq"])
    ]
    assert sum(counts.values()) == 40
    assert all(a.seed == seed_fingerprint(study_seed(SLUG, TEST_MASTER_KEY)) for a in made)


def test_each_arm_runs_its_own_intervention_and_the_row_carries_study_and_arm(
    store: EventStore, study: Study
) -> None:
    made = enroll(store, study, "low", 1)

    with store.reading() as conn:
        (row,) = study_allocations(conn, SLUG)
    participant = store.projection_row("participants", row["participant_id"])
    assert participant is not None
    assert (participant["study"], participant["arm"]) == (SLUG, made.arm)
    assert participant["intervention"] == study.arms[made.arm].intervention
    assert row["factors"] == {"activity_level": "low"}
    assert factor_names(study) == ("activity_level",)


def test_the_recorded_allocations_are_reproduced_by_the_seed_and_replay_keeps_them(
    store: EventStore, study: Study
) -> None:
    for n in range(12):
        enroll(store, study, "high" if n % 2 else "low", n)
    records = [
        {**e.data.model_dump(), "participant": e.participant_id, "baseline": e.data.factors}
        for e in store.read_all(event_types=[ParticipantAllocated.event_type])
    ]
    seed = study_seed(SLUG, TEST_MASTER_KEY)

    assert check_allocations(study, seed, records) == []
    tampered = [dict(r) for r in records]
    tampered[5]["arm"] = "coach" if tampered[5]["arm"] == "control" else "control"
    assert [m.index for m in check_allocations(study, seed, tampered)][:1] == [5]
    report = replay.check(store)
    assert report.clean, report.differences[:3]


def test_concurrent_enrollments_into_one_study_never_draw_the_same_place(
    pg_store: EventStore, study: Study
) -> None:
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for n in range(offset, offset + 10):
                enroll(pg_store, study, "low", n)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k * 100,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    with pg_store.reading() as conn:
        rows = study_allocations(conn, SLUG)
    places = [(r["sequence"], r["stratum"], r["number"]) for r in rows]
    assert len(places) == 40 and len(set(places)) == 40
    assert sorted(r["number"] for r in rows) == list(range(40))


def test_the_shipped_study_folder_validates(study: Study) -> None:
    assert Path(STUDIES / SLUG / "study.yaml").is_file()
    assert set(study.arms) == {"coach", "control"}
