"""Readiness: which degraded states hold now (GET /ready, the console, /metrics), and the
operator alert when one lasts OPERATOR_ALERT_MINUTES (once per episode, not per check).

A degraded state is something a participant feels while `/health` still says "healthy": the
LLM failing (READY_FAILURES of its last READY_WINDOW calls), sends failing (the same of the
last finished sends), turns failing (READY_FAILURES `turn.failed` within an hour), work items
parked, timers more than 5 minutes overdue, alerts nobody acknowledged within
ALERT_ESCALATE_MINUTES (60 when escalation is off), review items nobody cleared 5 minutes past
REVIEW_ESCALATE_MINUTES (their escalation did not happen: the worker or scheduler is down).

`check` is run by the scheduler's leader at every beat: a state first seen is recorded
(`readiness.degraded`), one no longer seen ends its episode (`readiness.restored`), and one
that has lasted OPERATOR_ALERT_MINUTES raises `alert.raised` (kind `degraded`, on the system
stream, shown in the console's alerts) and texts OPERATOR_PHONES through the outbox, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.channel import outbound
from bot.core.config import Settings
from bot.store.event_store import EventStore
from bot.store.event_types.alerts import AlertRaised
from bot.store.event_types.readiness import ReadinessDegraded, ReadinessRestored
from bot.store.events import SYSTEM_STREAM, EventData, NewEvent, new_id
from bot.store.reads import readiness as reads

STATES = (
    "llm_failing",
    "sends_failing",
    "turns_failing",
    "work_parked",
    "timers_overdue",
    "alerts_unattended",
    "reviews_unattended",
)
# What an operator should look at first, per state (docs/operations.md, "When an alert fires").
ADVICE = {
    "llm_failing": "check the LLM server, OPENAI_* settings and the llm.called events",
    "sends_failing": "check Twilio (credentials, balance, numbers) and the outbox errors",
    "turns_failing": "check the LLM and the worker log; participants are getting fallbacks",
    "work_parked": "read the parked work items' errors (tandem events) and fix the cause",
    "timers_overdue": "check that a worker is running and one of them leads the scheduler",
    "alerts_unattended": "acknowledge or resolve the open alerts in the console",
    "reviews_unattended": "clear the console's review queue, and check that a worker runs "
    "and leads the scheduler (review items escalate by timer)",
}


@dataclass(frozen=True)
class State:
    name: str
    degraded: bool
    detail: str


def limits(settings: Settings) -> reads.Limits:
    unattended = settings.alert_escalate_minutes or 60.0
    return reads.Limits(
        calls=settings.ready_window,
        unattended=timedelta(minutes=unattended),
        review_unattended=timedelta(minutes=settings.review_escalate_minutes + 5),
    )


def judge(f: reads.Figures, settings: Settings) -> list[State]:
    """Each state, degraded or not, with what was counted."""
    most = settings.ready_failures
    window = limits(settings)
    return [
        State(
            "llm_failing",
            f.llm_failed >= most,
            f"{f.llm_failed} of the last {f.llm_calls} LLM calls failed",
        ),
        State(
            "sends_failing",
            f.sends_failed >= most,
            f"{f.sends_failed} of the last {f.sends} sends failed",
        ),
        State(
            "turns_failing",
            f.failed_turns >= most,
            f"{f.failed_turns} turns failed in the last hour",
        ),
        State("work_parked", f.parked_work > 0, f"{f.parked_work} work items parked"),
        State(
            "timers_overdue",
            f.overdue_timers > 0,
            f"{f.overdue_timers} timers more than {int(window.late.total_seconds() // 60)} "
            "minutes overdue",
        ),
        State(
            "alerts_unattended",
            f.unattended_alerts > 0,
            f"{f.unattended_alerts} alerts open for more than "
            f"{int(window.unattended.total_seconds() // 60)} minutes",
        ),
        State(
            "reviews_unattended",
            f.unattended_reviews > 0,
            f"{f.open_reviews} review items open, {f.unattended_reviews} of them for more than "
            f"{int(window.review_unattended.total_seconds() // 60)} minutes",
        ),
    ]


def states(store: EventStore, settings: Settings, now: datetime) -> list[State]:
    """The states as the database says now."""
    with store.reading() as conn:
        return judge(reads.figures(conn, now, limits(settings)), settings)


def check(store: EventStore, settings: Settings, now: datetime) -> list[EventData]:
    """Record episodes that began or ended, raise the operator alert of each that has lasted
    OPERATOR_ALERT_MINUTES; returns what was appended (one transaction on the system stream)."""
    found = states(store, settings, now)
    after = timedelta(minutes=settings.operator_alert_minutes)
    with store.reading() as conn:
        open_ = reads.episodes(conn)
        due = [
            s
            for s in found
            if s.degraded
            and s.name in open_
            and now - open_[s.name] >= after
            and not reads.alerted_since(conn, s.name, open_[s.name])
        ]
    appended: list[EventData] = []
    for s in found:
        if s.degraded and s.name not in open_:
            appended.append(ReadinessDegraded(state=s.name, detail=s.detail))
        elif not s.degraded and s.name in open_:
            appended.append(ReadinessRestored(state=s.name))
    for s in due:
        minutes = int((now - open_[s.name]).total_seconds() // 60)
        summary = f"{s.name} for {minutes} minutes: {s.detail}; {ADVICE[s.name]}."
        appended.append(
            AlertRaised(
                alert_id=new_id(),
                kind="degraded",
                severity="critical",
                summary=summary,
                rule=s.name,
            )
        )
        body = f"Tandem operator alert: {summary}"
        for phone in settings.operators():
            appended += outbound.to_address(phone, "sms", body, kind="alert")
    if appended:
        store.append(SYSTEM_STREAM, [NewEvent(e, meta={"actor": "readiness"}) for e in appended])
    return appended
