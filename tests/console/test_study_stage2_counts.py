"""The study page counts stage 2 too: one table per stage-2 sequence (the participants of one
stage-1 arm randomised again), per arm and stratum with its balance, as the role may see arms:
names for an open study, codes for an admin of a blinded one, totals only (one stage-2 table,
since a sequence is named by a stage-1 arm) for a researcher of a blinded one."""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path

import pytest
from flask import Flask

from bot.core.clock import FakeClock
from bot.runtime.routing import intervention_catalogue
from bot.services.allocation import allocated
from bot.store.event_store import EventStore
from bot.store.event_types.participants import ParticipantEnrolled
from bot.store.event_types.studies import ParticipantAllocated
from bot.store.events import new_id, participant_stream
from bot.studies.blinding import arm_code
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.studies.seed import study_seed
from tests.conftest import TEST_MASTER_KEY
from tests.console.conftest import PASSWORD, get, sign_in, staff_member
from tests.web.study_apps import study_app

OPEN, BLIND = "smart-demo", "smart-blind"
FIRST = ("tips", "goals")
SECOND = ("tips-daily", "tips-buddy")


@pytest.fixture(scope="module")
def studies(tmp_path_factory: pytest.TempPathFactory) -> StudyCatalogue:
    """smart-demo with both stage-1 arms re-randomised (two sequences), and a blinded copy."""
    root: Path = tmp_path_factory.mktemp("studies")
    text = (STUDIES / OPEN / "study.yaml").read_text()
    assert "after: [tips]" in text and "blinded: false" in text
    text = text.replace("after: [tips]", "after: [tips, goals]")
    for slug, shown in ((OPEN, text), (BLIND, text.replace("blinded: false", "blinded: true"))):
        (root / slug).mkdir()
        (root / slug / "study.yaml").write_text(shown)
    catalogue = StudyCatalogue(root, intervention_catalogue())
    assert catalogue.refusal(OPEN) is None and catalogue.refusal(BLIND) is None
    return catalogue


@pytest.fixture
def app(database_url: str, store: EventStore, clock: FakeClock, studies: StudyCatalogue) -> Flask:
    return study_app(database_url, store, clock, studies)


def allocate(store: EventStore, studies: StudyCatalogue, slug: str, n: int) -> Counter[str]:
    """`n` participants of `slug` allocated at stage 1, every second one again at stage 2:
    how many stage-2 allocations each (sequence, arm) holds."""
    study, seed = studies.study(slug), study_seed(slug, TEST_MASTER_KEY)
    made: Counter[str] = Counter()
    for number in range(n):
        pid, level = new_id(), {"activity_level": "low" if number % 3 else "high"}
        with store.transaction() as tx:
            first = allocated(tx, slug, study, seed, pid, level)
            enrolled = ParticipantEnrolled(
                participant_id=pid,
                phone=f"+1415556{number:04d}",
                timezone="America/Toronto",
                intervention="smart-walk",
            )
            events: list[ParticipantEnrolled | ParticipantAllocated] = [enrolled, first]
            tx.append(participant_stream(pid), events, expected_version=0)
        if number % 2:
            continue
        with store.transaction() as tx:
            second = allocated(tx, slug, study, seed, pid, level, 2, first.arm)
            tx.append(participant_stream(pid), [second])
        made[f"{first.arm}/{second.arm}"] += 1
    return made


def page(app: Flask, role: str) -> str:
    staff_member(app.extensions["tandem"], f"{role}@example.org", role)
    client = app.test_client()
    assert sign_in(client, f"{role}@example.org", PASSWORD).status_code == 302
    answer = get(client, "/console/study")
    assert answer.status_code == 200
    return html.unescape(answer.get_data(as_text=True))


def section(text: str, anchor: str) -> str:
    assert f'id="{anchor}"' in text, anchor
    return text.split(f'id="{anchor}"')[1].split("</section>")[0]


def row_of(table: str, label: str) -> list[str]:
    """The cells of the table's row headed `label` (`all`: the totals)."""
    row = table.split(f"<th>{label}</th>" if label == "all" else f"<td>{label}</td>")[1]
    row = row.split("</tr>")[0]
    return [c.split(">")[-1] for c in row.replace("</th>", "</td>").split("</td>")[:-1]]


def test_an_open_study_shows_each_stage_two_sequence_by_arm(
    app: Flask, store: EventStore, studies: StudyCatalogue
) -> None:
    made = allocate(store, studies, OPEN, 16)
    text = page(app, "researcher")
    for first in FIRST:
        count = {arm: made[f"{first}/{arm}"] for arm in SECOND}
        assert sum(count.values()), f"no stage-2 allocation after {first}"
        table = section(text, f"study-{OPEN}-stage2-{first}")
        assert f"stage 2, after {first}, stratified" in table
        heads = [f"<th>{arm}</th>" for arm in SECOND]
        assert all(head in table for head in heads)
        cells = row_of(table, "all")
        assert cells[:3] == [
            str(count["tips-daily"]),
            str(count["tips-buddy"]),
            str(sum(count.values())),
        ]
    stage1 = section(text, f"study-{OPEN}")
    assert row_of(stage1, "all")[2] == "16"  # stage 1 still counts everybody once


def test_a_blinded_study_shows_stage_two_as_the_role_may_see_it(
    app: Flask, store: EventStore, studies: StudyCatalogue
) -> None:
    made = allocate(store, studies, BLIND, 12)
    total = sum(made.values())
    researcher = page(app, "researcher")
    table = section(researcher, f"study-{BLIND}-stage2")
    names = (*FIRST, *SECOND)
    assert not any(f">{name}<" in table or f"after {name}" in table for name in names)
    assert row_of(table, "all") == [str(total), row_of(table, "all")[1]]
    assert not any(f'id="study-{BLIND}-stage2-{name}"' in researcher for name in names)

    seed = study_seed(BLIND, TEST_MASTER_KEY)
    admin = page(app, "admin")
    for first in FIRST:
        count = {arm: made[f"{first}/{arm}"] for arm in SECOND}
        assert sum(count.values()), f"no stage-2 allocation after {first}"
        table = section(admin, f"study-{BLIND}-stage2-{arm_code(seed, first)}")
        assert f"after {arm_code(seed, first)}" in table
        assert not any(f">{name}<" in table for name in names)
        codes = [arm_code(seed, arm) for arm in SECOND]
        assert all(f"<th>{c}</th>" in table for c in codes)
        assert row_of(table, "all")[2] == str(sum(count.values()))
