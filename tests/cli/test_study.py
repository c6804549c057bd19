"""`tandem study check` and `tandem study allocations --reveal` on a real database."""

from __future__ import annotations

import pytest

from bot.runtime.routing import intervention_catalogue
from bot.services.allocation import allocated
from bot.store.event_store import EventStore
from bot.store.event_types.studies import AllocationsRevealed, ParticipantAllocated
from bot.store.events import SYSTEM_STREAM, participant_stream
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.studies.format import Study
from bot.studies.seed import study_seed
from tests.cli.test_store_commands import tandem
from tests.conftest import TEST_MASTER_KEY
from tests.factories import enrolled
from tests.services.test_allocation import SLUG, enroll


@pytest.fixture(scope="module")
def study() -> Study:
    return StudyCatalogue(STUDIES, intervention_catalogue()).study(SLUG)


def test_check_finds_no_mismatch_in_honest_allocations_and_the_one_tampered_in(
    store: EventStore, database_url: str, study: Study
) -> None:
    [enroll(store, study, "low", n) for n in range(6)]
    honest = tandem("study", "check", SLUG, url=database_url)
    assert honest.returncode == 0, honest.stderr
    assert "0 mismatch(es)" in honest.stdout and "6 allocation event(s)" in honest.stdout

    # An allocation recorded with the other arm than the sequence gives at that place.
    intruder = enrolled(phone="+14155550999")
    seed = study_seed(SLUG, TEST_MASTER_KEY)
    with store.transaction() as tx:
        honest_next = allocated(
            tx, SLUG, study, seed, intruder.participant_id, {"activity_level": "low"}
        )
        flipped = "coach" if honest_next.arm == "control" else "control"
        tampered = honest_next.model_copy(update={"arm": flipped})
        assert isinstance(tampered, ParticipantAllocated)
        tx.append(participant_stream(intruder.participant_id), [intruder, tampered])

    found = tandem("study", "check", SLUG, url=database_url)
    assert found.returncode == 1
    assert f"participant {intruder.participant_id}" in found.stdout
    assert f"arm is '{flipped}', the seed gives '{honest_next.arm}'" in found.stdout
    assert "1 mismatch(es)" in found.stdout


def test_the_allocation_list_is_concealed_unless_revealed_and_the_reveal_is_recorded(
    store: EventStore, database_url: str, study: Study
) -> None:
    made = enroll(store, study, "high", 1)
    concealed = tandem("study", "allocations", SLUG, "--reason", "audit", url=database_url)
    assert concealed.returncode == 1
    assert made.arm not in concealed.stdout + concealed.stderr

    revealed = tandem(
        "study", "allocations", SLUG, "--reveal", "--reason", "DSMB meeting", url=database_url
    )
    assert revealed.returncode == 0, revealed.stderr
    assert f"\t{made.arm}\t" in revealed.stdout
    (event,) = [e for e in store.load(SYSTEM_STREAM) if isinstance(e.data, AllocationsRevealed)]
    assert (event.data.study, event.data.reason, event.data.count) == (SLUG, "DSMB meeting", 1)


def test_an_unknown_study_is_refused_naming_the_known_ones(database_url: str) -> None:
    result = tandem("study", "check", "no-such-study", url=database_url)
    assert result.returncode == 1
    assert "no study 'no-such-study'; known: smart-demo, walk-pilot, walk-prompts" in result.stderr
