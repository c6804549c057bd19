"""The chat sandbox's commands: /state, /events, /notes, /decisions, /jump, /wait, /reset and
/help.

Each takes the sandbox and the text after the command and returns what to print; a mistake
(an unknown step, a bad duration) is a ValueError whose message is printed as the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from bot.core.clock import FakeClock
from bot.interventions.interpreter.forms import clock
from bot.sandbox import decision_lines, views
from bot.store.event_store import EventStore
from bot.store.event_types.conversation import StateTransitioned
from bot.store.event_types.interventions import StepEntered
from bot.store.events import EventData, NewEvent
from bot.store.projections.participant_forms import state as form_state
from bot.store.queries import pending_timers
from modules.step import StepModule


class Sandbox(Protocol):
    """What the commands use of `engine.Sandbox` (which runs them; see `Sandbox.command`)."""

    slug: str
    zone: Any
    clock: FakeClock
    participant_id: str
    store: EventStore
    steps: StepModule

    @property
    def stream(self) -> str: ...

    def row(self) -> dict[str, Any]: ...

    def restart(self) -> list[str]: ...

    def settle(self) -> list[str]: ...

    def transcript(self, sent: list[str]) -> str: ...

    def timer_kind(self, timer_id: str) -> str: ...

    def next_due(self) -> datetime | None: ...


MAX_WAIT = timedelta(days=60)
MAX_STEPS = 1000  # timers fired on the way through one /wait
HELP = """commands:
  /state          where the participant is: state, step, counters, profile, judgements, forms
                  (with their clocks), timers
  /events [N]     the last N events (default 20), one line each
  /notes          the notes taken so far (notes.<NAME>)
  /decisions      the decision points so far (available or why not, option, p, draw,
                  outcome) and the next ones; /decisions day runs the next 24 hours of them
  /jump STEP      move the participant to a step of the intervention
  /wait 2h        move the clock on (30s, 15m, 2h, 1d, 1h30m; alone: to the next timer)
  /reset          a fresh database and participant (re-reads the intervention's files)
  /help           this list;  /quit (or Ctrl-D) ends
  //text          sends "/text" as a message"""


def run(sandbox: Sandbox, line: str) -> str:
    name, _, arg = line.strip().partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None:
        return f"unknown command {name}\n{HELP}"
    try:
        return command(sandbox, arg.strip())
    except ValueError as exc:
        return f"error: {exc}"


def state(sandbox: Sandbox, _: str) -> str:
    row = sandbox.row()
    found, why = sandbox.steps.intervention(sandbox.slug)
    if found:
        about = f"{sandbox.slug} ({found.config.title}, revision {found.revision})"
    else:
        about = f"{sandbox.slug}: cannot run ({why})"
    step = found.steps.get(row["current_step"] or "") if found else None
    with sandbox.store.reading() as conn:
        pending = pending_timers(conn, sandbox.participant_id)
    now = sandbox.clock.now()
    forms = {
        name: clock(form, form_state(row, name))["text"]
        for name, form in (found.forms.items() if found else ())
    }
    return views.state_view(row, pending, now, about, step.title if step else None, forms)


def events(sandbox: Sandbox, arg: str) -> str:
    if arg and not arg.isdigit():
        raise ValueError(f"/events takes a number of events, not {arg!r}")
    count = int(arg or 20)
    recent = sandbox.store.load(sandbox.stream)[-count:] if count else []
    return views.events_view(recent, sandbox.zone, sandbox.timer_kind)


def notes(sandbox: Sandbox, _: str) -> str:
    failed = [ev for ev in sandbox.store.load(sandbox.stream) if ev.event_type == "note.failed"]
    return views.notes_view(sandbox.row(), failed)


def decisions(sandbox: Sandbox, arg: str) -> str:
    """The participant's decision points so far and the next ones; with `day`, the clock
    first runs 24 hours on (each timer at its due time, as /wait does)."""
    if arg not in ("", "day"):
        raise ValueError(f"/decisions takes nothing or `day`, not {arg!r}")
    ran = wait(sandbox, "1d") + "\n" if arg == "day" else ""
    with sandbox.store.reading() as conn:
        pending = pending_timers(conn, sandbox.participant_id)
    loaded = sandbox.store.load(sandbox.stream)
    return ran + decision_lines.decisions_view(loaded, pending, sandbox.zone)


def jump(sandbox: Sandbox, step: str) -> str:
    """Move to `step` as an operator: `step.entered` (and `state.transitioned` into the step
    module if needed), with meta actor "chat". The step's enter judgements and on_enter
    actions are not run; the next message is a turn of that step."""
    found, why = sandbox.steps.intervention(sandbox.slug)
    if found is None:
        raise ValueError(f"/jump needs an intervention, and {sandbox.slug!r} cannot run: {why}")
    if step not in found.steps:
        which = f"no step {step!r} in {sandbox.slug}" if step else "/jump to which step?"
        raise ValueError(f"{which}; its steps: {', '.join(found.steps)}")
    row, module = sandbox.row(), sandbox.steps.name
    moved: list[EventData] = []
    if row["conversation_state"] != module:
        reason = f"/jump {step} in tandem chat"
        moved.append(
            StateTransitioned(
                from_state=row["conversation_state"],
                to_state=module,
                reason=reason,
                source="operator",
            )
        )
    moved.append(
        StepEntered(
            intervention=sandbox.slug,
            step=step,
            from_step=row["current_step"],
            entered_at=sandbox.clock.now(),
            revision=found.revision,
            via="operator",
        )
    )
    meta = {"actor": "chat", "command": f"/jump {step}"}
    sandbox.store.append(sandbox.stream, [NewEvent(e, meta=meta) for e in moved], row["version"])
    return (
        f"moved to step {step} ({found.steps[step].title}); its enter judgements and on_enter "
        "actions did not run. Your next message is a turn of this step."
    )


def wait(sandbox: Sandbox, arg: str) -> str:
    """Move the clock on; each timer due on the way fires at its own due time, so none is
    'missed' (late beyond its grace) because the wait was long."""
    clock, now = sandbox.clock, sandbox.clock.now()
    if arg:
        delta = views.parse_duration(arg)
        if delta > MAX_WAIT:
            raise ValueError(f"/wait at most {MAX_WAIT.days}d at a time")
    else:
        due = sandbox.next_due()
        if due is None:
            raise ValueError("no timer is pending; say how long: /wait 2h")
        delta = max(due - now, timedelta())
    target, sent = now + delta, []
    for _ in range(MAX_STEPS):
        due = sandbox.next_due()
        if due is None or due > target:
            break
        clock.set(max(due, clock.now()))
        sent += sandbox.settle()
    clock.set(target)
    sent += sandbox.settle()
    head = f"(waited {views.span(delta)}: it is {views.local(target, sandbox.zone)} local time)"
    return "\n".join(part for part in (head, sandbox.transcript(sent)) if part)


def reset(sandbox: Sandbox, _: str) -> str:
    return "(a fresh database and participant)\n" + sandbox.transcript(sandbox.restart())


COMMANDS: dict[str, Callable[[Sandbox, str], str]] = {
    "/state": state,
    "/events": events,
    "/notes": notes,
    "/decisions": decisions,
    "/jump": jump,
    "/wait": wait,
    "/reset": reset,
    "/help": lambda _sandbox, _arg: HELP,
}
