"""The Mermaid lines of an intervention that starts in a built-in module: the modules it can
reach (moves by `transition_state`), and, when one of them offers `scheduler`, the daily cycle
with its timers (the prompt, the "Did you do it?" and intensity questions, the reminder, the
move to feedback). The modules' tools are handed in by the caller (they live above here)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

FEEDBACK = "feedback"  # where the daily cycle's auto-feedback timer moves the conversation


@dataclass(frozen=True)
class CycleTimes:
    """The daily cycle's settings, as drawn (SCHEDULER_PREP_TIME_MINUTES,
    REMINDER_AFTER_PROMPT_HOURS, AUTO_FEEDBACK_AFTER_PROMPT_MINUTES; 0 = off)."""

    prep_minutes: int = 10
    reminder_hours: float = 5.0
    auto_feedback_minutes: float = 5.0


def module_lines(
    start: str,
    modules: Mapping[str, Sequence[str]],
    cycle: CycleTimes,
    label: Callable[[str], str],
) -> list[str]:
    """Lines for the modules reachable from `start` (name -> the tools its prompt offers)."""
    reached = _reachable(start, modules)
    lines = [f'  start((start)) --> {_node(start)}[["module: {label(start)}"]]']
    lines += [f'  {_node(name)}[["module: {label(name)}"]]' for name in reached[1:]]
    for name in reached:
        tools = modules.get(name, ())
        if "transition_state" in tools:
            for other in reached:
                if other != name:
                    lines.append(f'  {_node(name)} -->|"transition_state"| {_node(other)}')
    scheduling = [name for name in reached if "scheduler" in modules.get(name, ())]
    if scheduling:
        lines += _cycle(scheduling, reached, cycle)
    return lines


def _cycle(scheduling: list[str], reached: list[str], cycle: CycleTimes) -> list[str]:
    daily = f"timer daily: the habit time − {cycle.prep_minutes} min"
    lines = [f'  t_daily{{{{"{daily}"}}}}']
    lines += [f'  {_node(name)} -.->|"scheduler: create"| t_daily' for name in scheduling]
    lines.append('  t_daily --> c_prompt["habit prompt · Did you do it? · How\'s the intensity?"]')
    lines.append('  t_daily -->|"next day"| t_daily')
    if cycle.reminder_hours:
        hours = f"{cycle.reminder_hours:g}"
        lines.append(f'  c_prompt -.->|"no reply in {hours} h"| t_reminder{{{{"timer reminder"}}}}')
    if cycle.auto_feedback_minutes and FEEDBACK in reached:
        minutes = f"{cycle.auto_feedback_minutes:g}"
        lines.append(f'  c_prompt -.->|"after {minutes} min"| t_feedback{{{{"timer transition"}}}}')
        lines.append(f'  t_feedback -->|"to feedback"| {_node(FEEDBACK)}')
    return lines


def _reachable(start: str, modules: Mapping[str, Sequence[str]]) -> list[str]:
    """`start`, then every module `transition_state` can reach from it, in order found."""
    found, queue = [start], [start]
    while queue:
        name = queue.pop(0)
        if "transition_state" not in modules.get(name, ()):
            continue
        for other in modules:
            if other not in found:
                found.append(other)
                queue.append(other)
    return found


def _node(name: str) -> str:
    return "m_" + "".join(c if c.isalnum() else "_" for c in name)
