"""SMART stage 2 on the real engine (studies/smart-demo): participants enrolled through the API,
answering through the signed webhook; entering the `review` step re-randomises the tips arm's
non-responders, in the transaction of that turn, and leaves its responders and the goals arm
alone; the new arm's variables word what follows; the stage-2 blocks are balanced at each
block end within each stratum; `tandem study check` recomputes stage 2 too; a timer starts
it too; a condition that cannot be evaluated is a loud failure; and stage 2 commits with the
turn that sets it off or not at all. On SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bot.runtime.routing import intervention_catalogue
from bot.runtime.worker import Worker
from bot.services.allocation import allocated
from bot.services.stage2 import Due, Stage2
from bot.store.event_store import Transaction
from bot.store.event_types.studies import ParticipantAllocated, Stage2Assessed
from bot.store.event_types.timers import TimerCancelled
from bot.store.events import EventData, participant_stream
from bot.studies.catalogue import STUDIES, StudyCatalogue
from bot.studies.seed import study_seed
from bot.timers import one_shot
from bot.web import create_app
from tests.cli.test_store_commands import tandem
from tests.conftest import TEST_MASTER_KEY
from tests.scenarios.harness import Harness

SLUG = "smart-demo"
PLAN = {
    "tips-daily": "daily nudge",
    "tips-buddy": "walk with you twice",
    "tips": "next week's walking tip",
    "goals": "one walking goal each week",
}


def enroll_all(h: Harness, count: int) -> list[tuple[str, str, str]]:
    """`count` participants of smart-demo: (phone, participant id, activity level)."""
    made = []
    for n in range(count):
        level = "low" if n % 3 else "high"
        h.phone = f"+1416555{2000 + n:04d}"
        answer = h.enroll(study=SLUG, baseline={"activity_level": level}, name="Sam")
        assert answer.status_code == 201, answer.get_data(as_text=True)
        made.append((h.phone, h.pid, level))
    return made


def stage(h: Harness, pid: str, number: int) -> list[ParticipantAllocated]:
    return [a for a in h.data("participant.allocated", pid=pid) if a.stage == number]


def test_non_responders_of_the_tips_arm_are_re_randomised_and_nobody_else(
    make_harness: Callable[..., Harness], database_url: str
) -> None:
    h = make_harness()
    people = enroll_all(h, 30)
    days = random.Random(61).choices((0, 1, 2, 4, 6), k=len(people))  # 3 in 5 non-responders
    for (phone, _, _), walked in zip(people, days, strict=True):
        h.text(str(walked), sender=phone)

    second: list[ParticipantAllocated] = []
    for (_, pid, level), walked in zip(people, days, strict=True):
        (first,) = stage(h, pid, 1)
        assessed = h.data("participant.stage2_assessed", pid=pid)
        again = stage(h, pid, 2)
        row = h.participant(pid)
        if first.arm == "goals":
            assert assessed == [] and again == [] and row["arm"] == "goals"
            continue
        (verdict,) = assessed
        assert isinstance(verdict, Stage2Assessed)
        assert (verdict.study, verdict.trigger, verdict.met) == (SLUG, "step:review", walked < 3)
        if walked >= 3:  # a responder stays in the tips arm
            assert again == [] and row["arm"] == "tips"
            continue
        (drawn,) = again
        second.append(drawn)
        assert drawn.arm in ("tips-daily", "tips-buddy") and row["arm"] == drawn.arm
        assert (drawn.method, drawn.first_arm, drawn.sequence) == ("stratified", "tips", "s2/tips")
        assert drawn.stratum == f"activity_level={level}"
        assert drawn.probabilities == {"tips-daily": 0.5, "tips-buddy": 0.5}
        assert drawn.block is not None and drawn.position is not None
        # Appended right behind the turn that entered the review step (its work.completed).
        types = h.types(pid=pid)
        at = types.index("participant.stage2_assessed")
        assert types[at - 1] == "work.completed" and types[at + 1] == "participant.allocated"
        assert "step.entered" in types[types.index("message.received", at - 12) : at]

    assert len(second) >= 6, "the seed gave too few non-responders to test stage 2"
    second.sort(key=lambda a: a.number)  # the order they were drawn in
    ends = 0
    for stratum in {a.stratum for a in second}:
        within = [a for a in second if a.stratum == stratum]
        for end in [i for i, a in enumerate(within) if a.position == a.block_size]:
            counts = Counter(a.arm for a in within[: end + 1])
            assert counts["tips-daily"] == counts["tips-buddy"], (stratum, counts)
            ends += 1
    assert ends >= 2, "no stage-2 block was completed"

    # What follows is worded by the arm the participant is in now (`arm.*` of the new arm).
    for phone, pid, _ in people:
        h.text("ok", sender=phone)
        arm = h.participant(pid)["arm"]
        assert PLAN[arm] in h.outbound(phone)[-1], (arm, h.outbound(phone)[-1])

    honest = tandem("study", "check", SLUG, url=database_url)
    assert honest.returncode == 0, honest.stdout + honest.stderr
    assert "0 mismatch(es)" in honest.stdout
    assert f"{len(people) + len(second)} allocation event(s)" in honest.stdout

    # A stage-2 allocation recorded with the other option than the sequence gives there.
    tipsters = [pid for _, pid, _ in people if stage(h, pid, 1)[0].arm == "tips"]
    responder = next(p for p in tipsters if not stage(h, p, 2))
    study = StudyCatalogue(STUDIES, intervention_catalogue()).study(SLUG)
    seed = study_seed(SLUG, TEST_MASTER_KEY)
    level = stage(h, responder, 1)[0].factors
    with h.store.transaction() as tx:
        honest_next = allocated(tx, SLUG, study, seed, responder, level, 2, "tips")
        flipped = "tips-buddy" if honest_next.arm == "tips-daily" else "tips-daily"
        forged = honest_next.model_copy(update={"arm": flipped})
        tx.append(participant_stream(responder), [forged])
    found = tandem("study", "check", SLUG, url=database_url)
    assert found.returncode == 1
    assert f"participant {responder}" in found.stdout
    assert f"arm is '{flipped}', the seed gives '{honest_next.arm}'" in found.stdout
    assert "1 mismatch(es)" in found.stdout


def variant(tmp_path: Path, old: str, new: str) -> StudyCatalogue:
    """smart-demo with `old` rewritten as `new`, in a studies folder of its own."""
    text = (STUDIES / SLUG / "study.yaml").read_text()
    assert old in text
    text = text.replace(old, new)
    (tmp_path / SLUG).mkdir(parents=True)
    (tmp_path / SLUG / "study.yaml").write_text(text)
    studies = StudyCatalogue(tmp_path, intervention_catalogue())
    assert studies.refusal(SLUG) is None, studies.problems(SLUG)
    return studies


def served(h: Harness, studies: StudyCatalogue) -> None:
    """The harness's app and worker on `studies` instead of studies/."""
    app = create_app(h.services, studies.interventions, studies)
    app.testing = True
    h.client = app.test_client()
    stage2 = Stage2(studies, h.settings.master_key)
    h.worker = Worker(h.services, h.worker.handler, "scenario-worker", stage2=stage2)


def test_a_stage_two_after_a_time_runs_when_its_timer_fires(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness()
    served(h, variant(tmp_path, "at: {step: review}", "at: {after: 7d}"))
    people = enroll_all(h, 8)
    tipsters = [(ph, pid) for ph, pid, _ in people if stage(h, pid, 1)[0].arm == "tips"]
    assert tipsters, "the seed put nobody in the tips arm"
    for phone, pid in tipsters:
        h.text("1", sender=phone)  # a non-responder: 1 day
        assert h.data("participant.stage2_assessed", pid=pid) == []  # not before the timer
        h.pid = pid
        (timer,) = h.timers(kind="stage2")
        assert timer["status"] == "scheduled" and timer["payload"]["study"] == SLUG
    h.advance(timedelta(days=7, minutes=1))
    for _, pid in tipsters:
        (verdict,) = h.data("participant.stage2_assessed", pid=pid)
        assert (verdict.trigger, verdict.met) == ("after:7d", True)
        assert len(stage(h, pid, 2)) == 1
    for _, pid, _ in people:
        if stage(h, pid, 1)[0].arm == "goals":
            assert h.data("participant.stage2_assessed", pid=pid) == []
            h.pid = pid
            assert h.timers(kind="stage2") == []  # the goals arm is not concerned


def test_a_stage_two_condition_that_cannot_be_evaluated_is_a_loud_failure(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness()
    # At the welcome step the days are not answered yet: `none < 3` cannot be evaluated.
    served(h, variant(tmp_path, "at: {step: review}", "at: {step: welcome}"))
    people = enroll_all(h, 4)
    tipsters = [pid for _, pid, _ in people if stage(h, pid, 1)[0].arm == "tips"]
    assert tipsters
    for pid in tipsters:
        assert h.data("participant.stage2_assessed", pid=pid) == []
        assert stage(h, pid, 2) == []
        (failed,) = h.data("condition.failed", pid=pid)
        assert failed.condition == "measurements.days_walked < 3"
        assert failed.file.endswith(f"{SLUG}/study.yaml") and failed.line is not None
        alerts = [a for a in h.data("alert.raised", pid=pid) if a.kind == "condition"]
        assert len(alerts) == 1 and alerts[0].severity == "critical"
        assert "not re-randomised" in alerts[0].summary


class _Broken(Stage2):
    """Stage 2 that fails after appending its events: the turn's transaction must roll back."""

    def run(self, tx: Transaction, participant_id: str, due: Due, now: datetime) -> list[EventData]:
        super().run(tx, participant_id, due, now)
        raise RuntimeError("the database went away")


def test_stage_two_commits_with_the_turn_that_sets_it_off_or_not_at_all(
    make_harness: Callable[..., Harness],
) -> None:
    h = make_harness()
    people = enroll_all(h, 6)
    phone, pid, _ = next(p for p in people if stage(h, p[1], 1)[0].arm == "tips")
    broken = _Broken(StudyCatalogue(STUDIES, intervention_catalogue()), h.settings.master_key)
    h.worker = Worker(h.services, h.worker.handler, "scenario-worker", stage2=broken)
    before = h.types(pid=pid)

    h.deliver("0", sender=phone)
    with pytest.raises(RuntimeError, match="went away"):
        h.worker.run_once()

    after = h.types(pid=pid)
    assert after == [*before, "message.received"]  # neither the turn nor stage 2 recorded
    assert h.participant(pid)["current_step"] == "welcome"


def test_a_stage_two_switch_to_another_intervention_cancels_the_old_ones_timers(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness()
    studies = variant(
        tmp_path,
        'intervention: smart-walk\n    description: "Stage 2',
        'intervention: walk-control\n    description: "Stage 2',
    )
    assert studies.study(SLUG).arms["tips-buddy"].intervention == "walk-control"
    served(h, studies)
    people = enroll_all(h, 6)
    phone, pid, _ = next(p for p in people if stage(h, p[1], 1)[0].arm == "tips")
    h.pid = pid
    # A message the old intervention (smart-walk) set for later, and a staff escalation.
    old = one_shot.at(h.participant(pid), h.clock.now() + timedelta(days=2), "OLD WORDS")
    kept = one_shot.scheduled(
        h.participant(pid), "alert_escalation", h.clock.now() + timedelta(days=30)
    )
    h.store.append(participant_stream(pid), [old, kept])

    h.text("0", sender=phone)  # a non-responder: re-randomised into a walk-control arm

    (drawn,) = stage(h, pid, 2)
    assert h.participant(pid)["intervention"] == "walk-control"
    events = h.events(pid=pid)
    switch = next(
        i
        for i, e in enumerate(events)
        if e.event_type == "participant.updated" and "intervention" in e.data.changes
    )
    # In the transaction that switched, right behind the switch: every timer of smart-walk.
    behind = [e for e in events[switch + 1 :] if isinstance(e.data, TimerCancelled)]
    behind = [e for e in behind if e.meta.get("actor") == "study:stage2"]
    assert behind and events[switch + 1] is behind[0]
    assert old.timer_id in {e.data.timer_id for e in behind}
    for e in behind:
        assert "stage 2 of smart-demo: smart-walk replaced by walk-control" == e.data.reason
    h.pid = pid
    assert {t["timer_id"] for t in h.timers(status="scheduled")} == {kept.timer_id}
    (escalation,) = h.timers(kind="alert_escalation")
    assert escalation["status"] == "scheduled"  # the staff's timer is not the intervention's
    (at,) = h.timers(kind="at")
    assert at["status"] == "cancelled"
    h.advance(timedelta(days=3))
    assert not any("OLD WORDS" in text for text in h.outbound(phone))
    assert drawn.arm in ("tips-daily", "tips-buddy")


def test_a_study_that_cannot_be_read_when_its_stage_two_is_due_is_a_loud_failure(
    make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    h = make_harness()
    served(h, variant(tmp_path, "at: {step: review}", "at: {after: 7d}"))
    people = enroll_all(h, 4)
    tipsters = [(ph, pid) for ph, pid, _ in people if stage(h, pid, 1)[0].arm == "tips"]
    assert tipsters
    for phone, _ in tipsters:
        h.text("1", sender=phone)
    # The study file is broken under the running worker (a process does not start with one).
    path = tmp_path / SLUG / "study.yaml"
    path.write_text(path.read_text().replace("tips-daily: 1", "tips-daily: 0"))
    served(h, StudyCatalogue(tmp_path, intervention_catalogue()))
    h.advance(timedelta(days=7, minutes=1))
    for _, pid in tipsters:
        assert h.data("participant.stage2_assessed", pid=pid) == []
        assert stage(h, pid, 2) == []
        (failed,) = h.data("condition.failed", pid=pid)
        assert "the study cannot be used" in failed.error and failed.file == str(path)
        (alert,) = [a for a in h.data("alert.raised", pid=pid) if a.kind == "condition"]
        assert alert.severity == "critical" and "not re-randomised" in alert.summary
        assert "after:7d" in alert.summary
