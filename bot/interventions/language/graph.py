"""The Mermaid graph of an intervention (`tandem interventions graph`): steps as nodes, each
transition an edge labelled with its condition, judgements as side nodes, digressions and
interrupts with their way back."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bot.interventions.language.intervention import Intervention
from bot.interventions.language.module_graph import CycleTimes, module_lines

_ID = re.compile(r"[^A-Za-z0-9_]")
STYLES = (
    "classDef root stroke-width:3px",
    "classDef ending fill:#eee,stroke:#888",
    "classDef digression stroke-dasharray:4 3",
    "classDef interrupt fill:#fde2e2,stroke:#c33",
    "classDef judgement fill:#eef,stroke:#88a,font-size:11px",
)
FORM_STYLE = "classDef form fill:#fff4dd,stroke:#c90,font-size:11px"
LIBRARY_STYLE = "classDef library fill:#efe,stroke:#8a8,font-size:11px"


def node_id(prefix: str, slug: str) -> str:
    return f"{prefix}_{_ID.sub('_', slug)}"


def label(text: str, limit: int = 120) -> str:
    """Text safe inside a Mermaid "..." label."""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace('"', "#quot;")


def mermaid(
    intervention: Intervention,
    modules: Mapping[str, Sequence[str]] | None = None,
    cycle: CycleTimes | None = None,
) -> str:
    """The graph as Mermaid flowchart source. `modules` (each built-in module's tools) draws
    the modules an intervention starting in one can reach, and the daily cycle's timers."""
    config = intervention.config
    lines = [f"%% {label(config.title)} (version {label(config.version)})", "flowchart TD"]
    for slug, step in intervention.steps.items():
        name = label(step.title)
        shape = f'(["{name}"])' if step.digression else f'["{name}"]'
        shape = f'{{{{"{name}"}}}}' if step.interrupt else shape
        kind = "interrupt" if step.interrupt else "digression" if step.digression else ""
        kind = "ending" if step.end else "root" if slug == config.root else kind
        lines.append(f"  {node_id('s', slug)}{shape}" + (f":::{kind}" if kind else ""))
    module = node_id("m", config.module or "")
    if config.module and modules is not None and config.module in modules:
        lines += module_lines(config.module, modules, cycle or CycleTimes(), label)
    elif config.module:  # participants start in a built-in conversation module
        lines.append(f'  start((start)) --> {module}[["module: {label(config.module)}"]]')
    if config.root in intervention.steps:
        arrow = f'{module} -.->|"moved to state step"|' if config.module else "start((start)) -->"
        lines.append(f"  {arrow} {node_id('s', config.root or '')}")
    lines += _transitions(intervention)
    lines += _returns(intervention)
    lines += _judgements(intervention)
    lines += _forms(intervention)
    lines += _libraries(intervention)
    lines += [f"  {style}" for style in STYLES]
    lines += [f"  {FORM_STYLE}"] if intervention.forms else []
    lines += [f"  {LIBRARY_STYLE}"] if intervention.config.libraries else []
    return "\n".join(lines) + "\n"


def _transitions(intervention: Intervention) -> list[str]:
    lines = []
    for slug, step in intervention.steps.items():
        for n, transition in enumerate(step.transitions):
            if transition.to not in intervention.steps:
                continue
            text = transition.when or "always"
            last = n == len(step.transitions) - 1
            if last and not step.returns and (step.max_turns or step.max_minutes):
                text += f" — or {_budget(step.max_turns, step.max_minutes)}"
            actions = ", ".join(
                f"retrieve {action.retrieve}" if action.retrieve else action.verb
                for action in transition.actions
            )
            text += f" [{actions}]" if actions else ""
            text += " — after the reply" if transition.after_reply else ""
            source, target = node_id("s", slug), node_id("s", transition.to)
            # "(1)", not "1.": Mermaid reads a label starting "1. " as a Markdown list.
            lines.append(f'  {source} -->|"({n + 1}) {label(text)}"| {target}')
    return lines


def _returns(intervention: Intervention) -> list[str]:
    """Interrupts from anywhere, sessions, and the way back of digressions and interrupts."""
    lines, config = [], intervention.config
    returning = [  # an unconditional transition always wins over the way back
        slug
        for slug, step in intervention.steps.items()
        if step.returns and all(t.when for t in step.transitions)
    ]
    if intervention.interrupts() or config.sessions:
        lines.append("  anywhere((any step))")
    for slug in intervention.interrupts():
        when = intervention.steps[slug].interrupt.when  # type: ignore[union-attr]  # interrupts() lists steps with an interrupt
        lines.append(f'  anywhere ==>|"{label(when)}"| {node_id("s", slug)}')
    if config.sessions and config.sessions.resume_at in intervention.steps:
        gap = f"silent for {config.sessions.gap_hours:g} h"
        lines.append(f'  anywhere ==>|"{gap}"| {node_id("s", config.sessions.resume_at)}')
    if returning:
        lines.append("  back((back to where they were))")
    for slug in returning:
        step = intervention.steps[slug]
        text = step.return_when or "after one reply"
        if step.max_turns or step.max_minutes:
            text += f" — or {_budget(step.max_turns, step.max_minutes)}"
        lines.append(f'  {node_id("s", slug)} -.->|"{label(text)}"| back')
    return lines


def _judgements(intervention: Intervention) -> list[str]:
    lines = []
    for slug in intervention.judgements:
        lines.append(f'  {node_id("j", slug)}[/"judge: {label(slug)}"/]:::judgement')
    for slug, step in intervention.steps.items():
        for run in step.judgements:
            if run.name in intervention.judgements:
                when = f"every {run.every} turns" if run.every > 1 else "each turn"
                when = when if run.when == "turn" else f"on {run.when}"
                lines.append(f'  {node_id("s", slug)} -.-|"{when}"| {node_id("j", run.name)}')
    for name in intervention.interrupt_judgements():
        if name in intervention.judgements:
            lines.append(f'  anywhere -.-|"each turn"| {node_id("j", name)}')
    return lines


def _forms(intervention: Intervention) -> list[str]:
    """Each form as a side node, with its completion rule; each step that fills it."""
    lines = []
    for name, form in intervention.forms.items():
        rule = f"<br/>complete when {label(form.complete_when)}" if form.complete_when else ""
        text = f"form: {label(name)} ({len(form.fields)} fields){rule}"
        lines.append(f'  {node_id("f", name)}[("{text}")]:::form')
    for slug, step in intervention.steps.items():
        if step.form is not None and step.form.name in intervention.forms:
            mode = "fills" if step.form.mode == "collect" else "records corrections"
            lines.append(f'  {node_id("s", slug)} -.-|"{mode}"| {node_id("f", step.form.name)}')
    return lines


def _libraries(intervention: Intervention) -> list[str]:
    """Each library as a side node, linked to the steps that retrieve from it: every turn, on
    entering or leaving, or at one of their transitions (numbered as the transition's label)."""
    lines = [
        f'  {node_id("l", name)}[("library: {label(name)}")]:::library'
        for name in intervention.config.libraries
    ]
    seen: set[str] = set()
    for found in intervention.retrievals():
        kind, _, slug = found.key.partition(":")
        part = found.path[0]
        if kind != "step" or found.spec.library not in intervention.libraries:
            continue
        when = {"retrieve": "each turn", "on_enter": "on enter", "on_exit": "on exit"}.get(
            part, f"at transition ({int(found.path[1]) + 1})"
        )
        line = f'  {node_id("s", slug)} -.-|"{when}"| {node_id("l", found.spec.library)}'
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines


def _budget(turns: int | None, minutes: float | None) -> str:
    parts = ([f"after {turns} turns"] if turns else []) + (
        [f"after {minutes:g} min"] if minutes else []
    )
    return " / ".join(parts)
