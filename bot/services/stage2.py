"""SMART stage 2 in the running engine: a turn that sets off a study's second stage (entering
its `stage2.at.step`, or its `stage2` timer firing after `stage2.at.after`) has the stage-2
condition evaluated and, where it holds, the participant re-randomised, in the transaction
that appends the turn (the worker calls `run` there, after the turn's events, so the
condition reads the state the turn left).

What it records, on the participant's stream: `participant.stage2_assessed` (the condition's
result, once per participant: stage 2 is one decision), then for those it holds for a
`participant.allocated` of stage 2 (drawn after the study's lock, like an enrollment's) and,
if the new arm runs another intervention, `participant.updated` switching to it and a
`timer.cancelled` for each pending timer of the old one (its sends, reminders, transitions,
decision points...), so that the old intervention never speaks again. A condition
that cannot be evaluated, an allocation that cannot be drawn (no seed), or a study that can
no longer be read when its stage-2 timer fires (changed under a running worker; a process does
not start with one) records `condition.failed` and a critical alert instead: never a silent
"not met".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.interventions.interpreter import context
from bot.interventions.interpreter.failures import ConditionFailure
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import read_intervention
from bot.services.allocation import allocated
from bot.store.event_store import Transaction
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.interventions import ConditionFailed, StepEntered
from bot.store.event_types.participants import ParticipantUpdated
from bot.store.event_types.studies import ParticipantAllocated, Stage2Assessed
from bot.store.event_types.timers import TimerCancelled, TimerScheduled, TimerSkipped
from bot.store.events import Event, EventData, NewEvent, new_id, participant_stream
from bot.store.queries import pending_timers
from bot.studies.catalogue import StudyCatalogue
from bot.studies.format import Study
from bot.studies.loader import STUDY as STUDY_FILE
from bot.studies.seed import study_seed
from bot.studies.stage2 import first_arms, stage2_applies

log = logging.getLogger(__name__)

KIND = "stage2"  # the timer of `stage2.at.after` (bot.timers.kinds)
ACTOR = "study:stage2"
# The pending timers a switch to another intervention leaves: the staff's alert and review
# escalations (not the intervention's), and the outcome windows of decisions already made
# (they send nothing and record what followed the decision).
KEPT_ON_SWITCH = frozenset({"alert_escalation", "review_escalation", "decision_outcome", KIND})


@dataclass(frozen=True)
class Due:
    """A turn that sets off `study`'s stage 2, and how (`step:<name>` or `after:<duration>`)."""

    study: str
    trigger: str


def stage2_timer(slug: str, study: Study, arm: str, now: datetime) -> TimerScheduled | None:
    """The timer that starts stage 2 for a participant just allocated to `arm` at stage 1, if
    the study's stage 2 comes `after` a time and concerns that arm."""
    if study.stage2 is None or study.stage2.at.after is None or arm not in first_arms(study):
        return None
    after = study.stage2.at.after
    return TimerScheduled(
        timer_id=new_id(),
        kind=KIND,
        due_at=now + after,
        payload={"study": slug, "after": _duration(after)},
    )


class Stage2:
    """Finds the turns that set off a stage 2 and runs it; one per worker process (it keeps
    the studies and the interventions it read)."""

    def __init__(self, studies: StudyCatalogue, master_key: str | None) -> None:
        self.studies, self.master_key = studies, master_key
        self._interventions: dict[str, tuple[Intervention | None, str]] = {}

    def due(
        self,
        participant: Mapping[str, Any],
        timer: Mapping[str, Any] | None,
        decided: Sequence[EventData | NewEvent],
    ) -> Due | None:
        """Whether the turn decided (`decided`, for `participant`, fired by `timer` if any)
        sets off a stage 2: cheap, and nothing for a participant in no study."""
        slug = participant.get("study")
        if not slug or participant.get("status") != "active":
            return None
        if self.studies.refusal(str(slug)) is not None and _stage2_timer(timer, str(slug)):
            # Its stage 2 is due and the study cannot be read: said in `run`, loudly.
            return Due(str(slug), f"after:{(timer or {}).get('payload', {}).get('after', '')}")
        study = self._study(str(slug))
        if study is None or study.stage2 is None:
            return None
        at = study.stage2.at
        made = [d.data if isinstance(d, NewEvent) else d for d in decided]
        if at.step is not None:
            entered = any(isinstance(e, StepEntered) and e.step == at.step for e in made)
            return Due(str(slug), f"step:{at.step}") if entered else None
        if not _stage2_timer(timer, str(slug)):
            return None
        assert timer is not None
        if any(isinstance(e, TimerSkipped) and e.timer_id == timer.get("timer_id") for e in made):
            return None
        return Due(str(slug), f"after:{_duration(at.after)}")

    def run(self, tx: Transaction, participant_id: str, due: Due, now: datetime) -> list[EventData]:
        """Stage 2 for the participant, appended in `tx` after the turn's events; what was
        appended (nothing if they were assessed already or their arm is not concerned)."""
        stream = participant_stream(participant_id)
        heads = next(p for p in tx.store.projections if p.name == "participants")
        row = tx.row(heads, participant_id)
        refusal = self.studies.refusal(due.study)
        if row is not None and refusal is not None:  # the study changed under the worker
            failed = self._failed(due, "(the study)", f"the study cannot be used: {refusal}")
            tx.append(stream, [NewEvent(e, meta={"actor": ACTOR}) for e in failed])
            return failed
        study = self._study(due.study)
        if row is None or study is None or study.stage2 is None:
            return []
        history = tx.load(stream)
        first = _stage1(history, due.study)
        if first is None or _assessed(history, due.study):
            return []
        if first.arm not in first_arms(study):
            return []
        decided = self._decide(tx, dict(row), history, study, due, first, now)
        tx.append(stream, [NewEvent(e, meta={"actor": ACTOR}) for e in decided])
        return decided

    def _decide(
        self,
        tx: Transaction,
        row: dict[str, Any],
        history: list[Event],
        study: Study,
        due: Due,
        first: ParticipantAllocated,
        now: datetime,
    ) -> list[EventData]:
        assert study.stage2 is not None
        when = study.stage2.when
        intervention, why = self._intervention(str(row.get("intervention") or ""))
        if intervention is None:
            return self._failed(due, when, f"its intervention cannot be loaded: {why}")
        baseline = {**first.factors, **first.baseline}
        try:
            met = stage2_applies(
                study, first.arm, baseline, context.data(intervention, row, now, history)
            )
        except ConditionFailure as failure:
            return self._failed(due, when, failure.error)
        try:
            seed = study_seed(due.study, self.master_key)
        except ValueError as exc:
            return self._failed(due, when, f"no allocation seed: {exc}")
        decided: list[EventData] = [
            Stage2Assessed(study=due.study, trigger=due.trigger, condition=when, met=met)
        ]
        if not met:
            return decided
        pid = str(row["participant_id"])
        try:
            drawn = allocated(tx, due.study, study, seed, pid, baseline, 2, first.arm)
        except ValueError as exc:  # a stratum or factor without a value: said, not raised
            return self._failed(due, when, f"the stage-2 allocation cannot be drawn: {exc}")
        decided.append(drawn)
        runs = study.arms[drawn.arm].intervention
        if runs != row.get("intervention"):
            decided.append(ParticipantUpdated(changes={"intervention": runs}))
            reason = f"stage 2 of {due.study}: {row.get('intervention')} replaced by {runs}"
            decided += [
                TimerCancelled(timer_id=str(t["timer_id"]), reason=reason)
                for t in pending_timers(tx.conn, pid)
                if t.get("kind") not in KEPT_ON_SWITCH
            ]
        log.info("participant %s: stage 2 of %s assessed (met)", pid, due.study)
        return decided

    def _failed(self, due: Due, condition: str, error: str) -> list[EventData]:
        """The loud failure: where the condition is written, and an alert for operators."""
        file = str(self.studies.root / due.study / STUDY_FILE)
        line = _condition_line(Path(file))
        where = f"{file}:{line}" if line else file
        log.error("study %s: stage 2 could not be assessed (%s)", due.study, due.trigger)
        return [
            ConditionFailed(condition=condition, error=error, file=file, line=line),
            AlertRaised(
                alert_id=new_id(),
                kind="condition",
                severity="critical",
                summary=f"study {due.study}: {where}: stage 2 ({due.trigger}) could not be "
                f"assessed: `{condition}`: {error}; the participant was not re-randomised",
                rule=f"stage2:{due.study}",
            ),
        ]

    def _study(self, slug: str) -> Study | None:
        if self.studies.refusal(slug) is not None:
            log.error("study %s cannot be used; its stage 2 does not run", slug)
            return None
        return self.studies.study(slug)

    def _intervention(self, slug: str) -> tuple[Intervention | None, str]:
        if slug not in self._interventions:
            found, problems = read_intervention(self.studies.interventions.root / slug)
            why = str(problems[0]) if problems else "no such intervention"
            self._interventions[slug] = (found, "") if found and not problems else (None, why)
        return self._interventions[slug]


def _stage2_timer(timer: Mapping[str, Any] | None, slug: str) -> bool:
    """Whether `timer` is `slug`'s stage-2 timer, fired."""
    if timer is None or timer.get("kind") != KIND or timer.get("status") != "fired":
        return False
    return (timer.get("payload") or {}).get("study") == slug


def _stage1(history: Sequence[Event], slug: str) -> ParticipantAllocated | None:
    for event in history:
        data = event.data
        if isinstance(data, ParticipantAllocated) and data.study == slug and data.stage == 1:
            return data
    return None


def _assessed(history: Sequence[Event], slug: str) -> bool:
    return any(
        (isinstance(e.data, Stage2Assessed) and e.data.study == slug)
        or (isinstance(e.data, ParticipantAllocated) and e.data.study == slug and e.data.stage == 2)
        for e in history
    )


def _condition_line(path: Path) -> int | None:
    """The line of `when:` under `stage2:` in the study file (None if it cannot be read)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    inside = False
    for number, text in enumerate(lines, start=1):
        if text.startswith("stage2:"):
            inside = True
        elif inside and text and not text[0].isspace() and not text.startswith("#"):
            inside = False
        elif inside and text.strip().startswith("when:"):
            return number
    return None


def _duration(value: timedelta | None) -> str:
    """A duration as study.yaml would write it (28d, 36h, 90m, 45s)."""
    if value is None:
        return ""
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
