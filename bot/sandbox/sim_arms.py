"""The report's `arms` section for a simulated study (bot.sandbox.sim_study): participants per
arm and per stratum as `participant.allocated` recorded them, and per arm completion, messages
per participant per day, where people stopped and alerts; then the steps and coloured graph of
each arm's intervention (one block per intervention). Read from the run's events only.

The arm names are shown: the participants are synthetic and the sequence is the simulation's
own (bot.sandbox.sim_study), so nothing of the real study's allocation is revealed; the report
says so, for a study team reading it before their study starts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from html import escape
from typing import TYPE_CHECKING, Any

from bot.store.events import Event

if TYPE_CHECKING:
    from bot.sandbox.sim_facts import Facts

NOTE = (
    "Synthetic participants, allocated with the simulation's own seed (never the study's "
    "secret one): the arms are named because this is not the real allocation, and nothing "
    "here predicts it. For the study team, before the study starts."
)


def arms(
    facts: Facts, steps_of: Any, stopped_at: Any, coloured_graph: Any
) -> dict[str, Any] | None:
    """The section, or None when an intervention (not a study) was simulated; the report's
    own readers of steps, drop-off and the graph are handed in (sim_report imports this)."""

    plan = facts.run.study
    if plan is None:
        return None
    first: dict[int, dict[str, Any]] = {}
    final: dict[int, str] = {}
    stage2: Counter[str] = Counter()
    for n, events in enumerate(facts.events):
        for e in events:
            if e.event_type == "participant.allocated":
                data = e.data.model_dump()
                if n in first:
                    stage2[data["arm"]] += 1
                first.setdefault(n, data)
                final[n] = data["arm"]
    strata: dict[str, Counter[str]] = defaultdict(Counter)
    for data in first.values():
        strata[_stratum(data)][data["arm"]] += 1
    members: dict[str, list[int]] = defaultdict(list)
    for n in sorted(final):
        members[final[n]].append(n)
    design = plan.design
    by_arm = {
        arm: _arm(facts, design.arms[arm].intervention, who, stopped_at)
        for arm, who in sorted(members.items())
    }
    blocks: dict[str, Any] = {}
    for slug in plan.interventions:
        who = [
            n for arm, ns in members.items() if design.arms[arm].intervention == slug for n in ns
        ]
        intervention, _ = facts.run.cohort.steps.intervention(slug)
        if intervention is None:
            continue
        found = steps_of(facts, intervention, who)
        blocks[slug] = {
            "arms": sorted({arm for arm in members if design.arms[arm].intervention == slug}),
            "participants": len(who),
            "steps": found,
            "graph": coloured_graph(facts, found, slug, len(who)),
        }
    return {
        "study": plan.slug,
        "note": NOTE,
        "allocation": design.allocation.method,
        "participants": dict(sorted(Counter(d["arm"] for d in first.values()).items())),
        "strata": {k: dict(sorted(v.items())) for k, v in sorted(strata.items())},
        "stage2": dict(sorted(stage2.items())),
        "by_arm": by_arm,
        "interventions": blocks,
    }


def _arm(facts: Facts, slug: str, who: list[int], stopped_at: Any) -> dict[str, Any]:
    """One arm's figures: its participants (by the arm they ended in)."""
    intervention, _ = facts.run.cohort.steps.intervention(slug)
    final_steps = (
        {s for s, step in intervention.steps.items() if not step.transitions}
        if intervention
        else set()
    )
    days = facts.run.days
    sent = 0
    for n in who:
        sent += sum(
            1
            for e, _ in facts.sent(n)
            if 0 <= (e.occurred_at - facts.run.start).total_seconds() < days * 86400
        )
    done = sum(1 for n in who if _completed(facts.events[n], final_steps))
    raised = sum(1 for n in who for e in facts.events[n] if e.event_type == "alert.raised")
    never = sum(
        1 for n in who if not any(e.event_type == "message.received" for e in facts.events[n])
    )
    return {
        "intervention": slug,
        "participants": len(who),
        "completed": done,
        "completion": round(done / len(who), 3) if who else 0,
        "messages_per_participant_per_day": round(sent / (len(who) * days), 3) if who else 0,
        "never_replied": never,
        "dropoff": dict(sorted(Counter(stopped_at(facts.events[n]) for n in who).items())),
        "alerts": raised,
    }


def _stratum(allocated: dict[str, Any]) -> str:
    """The allocation's stratum, or its minimisation factors' values, as one label."""
    if allocated.get("stratum"):
        return str(allocated["stratum"])
    factors = allocated.get("factors") or {}
    return ", ".join(f"{k}={v}" for k, v in sorted(factors.items())) or "(none)"


def _completed(events: list[Event], final_steps: set[str]) -> bool:
    """Reached a step with no way out (the intervention's end) or was marked completed."""
    for e in events:
        data = e.data.model_dump()
        if e.event_type == "step.entered" and data.get("step") in final_steps:
            return True
        if e.event_type == "participant.status_changed" and data.get("status") == "completed":
            return True
    return False


def html(section: dict[str, Any]) -> str:
    """The section as HTML: the note, per-arm and per-stratum tables, a block per intervention."""
    parts = [f"<h2>Arms (study {escape(section['study'])})</h2>", f"<p><em>{escape(NOTE)}</em></p>"]
    parts.append(f"<p>Allocation: {escape(section['allocation'])}.</p>")
    head = [
        "arm",
        "intervention",
        "participants",
        "completed",
        "completion",
        "messages / participant / day",
        "never replied",
        "alerts",
    ]
    rows = [
        [
            arm,
            a["intervention"],
            a["participants"],
            a["completed"],
            a["completion"],
            a["messages_per_participant_per_day"],
            a["never_replied"],
            a["alerts"],
        ]
        for arm, a in section["by_arm"].items()
    ]
    parts.append(_table(head, rows))
    parts.append("<h3>Allocated (stage 1) per stratum</h3>")
    parts.append(
        _table(
            ["stratum", "arm", "participants"],
            [
                [stratum, arm, count]
                for stratum, d in section["strata"].items()
                for arm, count in d.items()
            ],
        )
    )
    if section["stage2"]:
        parts.append("<h3>Stage 2</h3>")
        parts.append(_table(["arm", "participants"], list(section["stage2"].items())))
    parts.append("<h3>Where people stopped, per arm</h3>")
    parts.append(
        _table(
            ["arm", "where", "participants"],
            [
                [arm, where, count]
                for arm, a in section["by_arm"].items()
                for where, count in a["dropoff"].items()
            ],
        )
    )
    for slug, block in section["interventions"].items():
        parts.append(
            f"<h3>Steps of {escape(slug)} (arms {escape(', '.join(block['arms']))}; "
            f"{block['participants']} participants)</h3>"
        )
        steps = block["steps"]
        parts.append(
            _table(
                ["step", "participants", "entries", "turns"],
                [[r["step"], r["participants"], r["entries"], r["turns"]] for r in steps["steps"]],
            )
        )
        parts.append(f"<p>Dead steps: {escape(', '.join(steps['dead_steps']) or 'none')}.</p>")
        if block["graph"]:
            parts.append("<details><summary>Graph (Mermaid source, coloured by reach)</summary>")
            parts.append(f"<pre>{escape(block['graph'])}</pre></details>")
    return "\n".join(parts)


def _table(head: list[str], rows: list[Any]) -> str:
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><tr>{th}</tr>{body}</table>"
