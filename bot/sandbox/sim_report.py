"""The report of a simulation (`tandem simulate`): numbers read back from the run's events
only, as `report.json` and `report.html` (the same numbers as text; no script needed).

Each section is one function of the events; a feature the intervention does not use (decision
points, instruments) leaves its section out, and a new feature adds its own function to
SECTIONS. Nothing random or wall-clock goes in, so a seed gives the same report run after run.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from html import escape
from pathlib import Path
from typing import Any

from bot.console.intervention_graph import draw
from bot.interventions.language.graph import node_id
from bot.interventions.language.intervention import Intervention
from bot.sandbox import sim_arms, sim_costs, sim_pages, sim_progress, whatsapp_window
from bot.sandbox.sim_facts import Facts, ran
from bot.sandbox.sim_prices import PriceTable
from bot.sandbox.simulation import Run
from bot.store.events import Event

# Message kinds the engine sends on its own (not an answer to a text): quiet hours bind these.
ANSWERS = {"reply", "crisis", "turn_failed", "debug", "alert"}
FAILURES = ("template.failed", "condition.failed", "turn.failed", "judgement.failed")


def summary(facts: Facts) -> dict[str, Any]:
    run = facts.run
    return {
        "target": run.study.slug if run.study else facts.slug,
        "participants": len(run.names),
        "days": run.days,
        "seed": run.seed,
        "start": run.start.isoformat(),
        "personas": dict(sorted(Counter(run.names).items())),
        "events": sum(len(e) for e in facts.events),
    }


def steps(facts: Facts) -> dict[str, Any]:
    """Steps reached (participants and entries), transitions taken, turns per step; a
    declared step nobody reached or a declared transition never taken is listed as dead."""
    return steps_of(facts, facts.intervention, running(facts))


def running(facts: Facts) -> list[int]:
    """The participants who ran the simulated intervention (in a study: its first arm's)."""
    return [n for n, events in enumerate(facts.events) if ran(events) in (None, facts.slug)]


def steps_of(facts: Facts, intervention: Intervention, who: Iterable[int]) -> dict[str, Any]:
    """`steps` for the participants `who` (those of one arm's intervention, in a study)."""
    reached: dict[str, set[int]] = defaultdict(set)
    entries: Counter[str] = Counter()
    taken: dict[tuple[str, str], set[int]] = defaultdict(set)
    turns: Counter[str] = Counter()
    for n in who:
        for e in facts.events[n]:
            data = e.data.model_dump()
            if e.event_type == "step.entered":
                reached[data["step"]].add(n)
                entries[data["step"]] += 1
                if data.get("from_step"):
                    taken[(data["from_step"], data["step"])].add(n)
            elif e.event_type == "step.turn_taken":
                turns[data["step"]] += 1
    declared = intervention.steps
    rows: list[dict[str, Any]] = []
    for slug, step in declared.items():
        rows.append(
            {
                "step": slug,
                "participants": len(reached.get(slug, ())),
                "entries": entries[slug],
                "turns": turns[slug],
                "transitions": [
                    {
                        "to": t.to,
                        "when": t.when,
                        "participants": len(taken.get((slug, t.to), ())),
                    }
                    for t in step.transitions
                ],
            }
        )
    return {
        "steps": rows,
        "taken": [
            {"from": a, "to": b, "participants": len(who)} for (a, b), who in sorted(taken.items())
        ],
        "dead_steps": [r["step"] for r in rows if r["participants"] == 0],
        "dead_transitions": [
            f"{r['step']} -> {t['to']}"
            for r in rows
            if r["participants"]
            for t in r["transitions"]
            if t["participants"] == 0
        ],
    }


def dropoff(facts: Facts) -> dict[str, Any]:
    """Per persona: where each participant stopped answering (the first question or
    questionnaire asked after their last message, and the step they were in), and how many
    never replied."""
    by_persona: dict[str, Counter[str]] = defaultdict(Counter)
    for n, events in enumerate(facts.events):
        by_persona[facts.run.names[n]][stopped_at(events)] += 1
    return {name: dict(sorted(c.items())) for name, c in sorted(by_persona.items())}


def stopped_at(events: list[Event]) -> str:
    """Where one participant stopped answering: `dropoff`'s words for them."""
    step, last_in, stopped = None, -1, None
    for i, e in enumerate(events):
        if e.event_type == "step.entered":
            step = e.data.model_dump()["step"]
        elif e.event_type == "message.received":
            last_in, stopped = i, None
        elif (asked := _asked(e)) and stopped is None and i > last_in:
            stopped = f"{asked} (step {step})"
    where = stopped or ("answered to the end" if last_in >= 0 else "nothing asked")
    return f"never replied; {where}" if last_in < 0 else where


def _asked(e: Event) -> str | None:
    """What an event asks the participant (a question, a questionnaire), or None."""
    if e.event_type == "measurement.asked":
        return f"question {e.data.model_dump()['measurement']}"
    if e.event_type == "instrument.started":
        return f"instrument {e.data.model_dump().get('instrument')}"
    return None


def burden(facts: Facts) -> dict[str, Any]:
    """Messages sent to participants per participant per day of the study (from enrollment),
    and per local hour of the day; proactive messages inside quiet hours are violations."""
    days = facts.run.days
    per_day = [[0] * days for _ in facts.events]
    hours = [0] * 24
    violations = []
    for n, _ in enumerate(facts.events):
        for e, queued in facts.sent(n):
            day = int((e.occurred_at - facts.run.start).total_seconds() // 86400)
            if 0 <= day < days:
                per_day[n][day] += 1
            hours[e.occurred_at.astimezone(facts.zones[n]).hour] += 1
            proactive = queued.get("kind") not in ANSWERS
            quiet = facts.quiets[n]
            if proactive and quiet and quiet.contains(e.occurred_at, facts.zones[n]):
                kind = queued.get("kind")
                violations.append({"participant": n, "at": e.occurred_at.isoformat(), "kind": kind})
    flat = [x for row in per_day for x in row]
    window = [whatsapp_window.check(events) for events in facts.events]
    return {
        "per_participant_per_day": {
            "mean": round(sum(flat) / len(flat), 3) if flat else 0,
            "max": max(flat, default=0),
            "total": sum(flat),
        },
        "per_day_total": [sum(row[d] for row in per_day) for d in range(days)],
        "per_local_hour": hours,
        "quiet_hours": "; ".join(sorted({f"{q.start}-{q.end}" for q in facts.quiets if q})) or None,
        "quiet_hours_violations": len(violations),
        "violations": violations[:20],
        "window_violations": sum(len(w.violations) for w in window),  # WhatsApp: must be 0
        "template_sends": sum(w.templates for w in window),
    }


def alerts(facts: Facts) -> dict[str, Any]:
    found: Counter[str] = Counter()
    for events in facts.events:
        for e in events:
            if e.event_type == "alert.raised":
                data = e.data.model_dump()
                found[
                    f"{data.get('severity', '?')}: {data.get('kind') or data.get('reason', '')}"
                ] += 1
    return {"raised": sum(found.values()), "by_kind": dict(sorted(found.items()))}


def failures(facts: Facts) -> dict[str, Any]:
    """Template, condition, judgement and turn failures, by where they are (file:line)."""
    found: Counter[tuple[str, str, str]] = Counter()
    who: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for n, events in enumerate(facts.events):
        for e in events:
            if e.event_type in FAILURES:
                data = e.data.model_dump()
                file = data.get("file")
                where = f"{file}:{data.get('line')}" if file else "(no file)"
                key = (e.event_type, where, str(data.get("step") or ""))
                found[key] += 1
                who[key].add(n)
    rows = [
        {"event": k[0], "where": k[1], "step": k[2], "times": c, "participants": len(who[k])}
        for k, c in sorted(found.items())
    ]
    return {"total": sum(found.values()), "failures": rows}


def replies(facts: Facts) -> dict[str, Any]:
    """What the personas sent, by kind (answer, invalid, off_topic, chatter, stop, crisis)."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for player in facts.run.players:
        by[player.name].update(r.kind for r in player.said)
    return {name: dict(sorted(c.items())) for name, c in sorted(by.items())}


def decisions(facts: Facts) -> dict[str, Any] | None:
    options: dict[str, Counter[str]] = defaultdict(Counter)
    for events in facts.events:
        for e in events:
            if e.event_type == "decision.made":
                data = e.data.model_dump()
                chosen = data.get("option") if data.get("available") else "(unavailable)"
                options[data["decision"]][str(chosen)] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(options.items())} or None


def instruments(facts: Facts) -> dict[str, Any] | None:
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for events in facts.events:
        for e in events:
            if e.event_type.startswith("instrument."):
                data = e.data.model_dump()
                seen[str(data.get("instrument"))][e.event_type.removeprefix("instrument.")] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(seen.items())} or None


def arms(facts: Facts) -> dict[str, Any] | None:
    """A study's arms (bot.sandbox.sim_arms, handed this report's step and graph readers);
    None when an intervention is simulated."""
    return sim_arms.arms(facts, steps_of, stopped_at, coloured_graph)


SECTIONS: dict[str, Callable[[Facts], dict[str, Any] | None]] = {
    "summary": summary,
    "steps": steps,
    "dropoff": dropoff,
    "burden": burden,
    "alerts": alerts,
    "failures": failures,
    "replies": replies,
    "decisions": decisions,
    "instruments": instruments,
    "completion": sim_progress.completion,
    "forms": sim_progress.forms,
    "adherence": sim_progress.adherence,
    "llm": sim_costs.llm,
    "llm_personas": sim_costs.personas,
    "arms": arms,
}


def build(run: Run, prices: PriceTable | None = None) -> dict[str, Any]:
    """Every section that has something to say."""
    facts = Facts(run)
    facts.prices = prices
    found = {name: section(facts) for name, section in SECTIONS.items()}
    report: dict[str, Any] = {name: value for name, value in found.items() if value is not None}
    report["graph"] = coloured_graph(facts, report["steps"], of=len(running(facts)))
    return report


def coloured_graph(
    facts: Facts, steps_found: dict[str, Any], slug: str | None = None, of: int | None = None
) -> str | None:
    """The intervention's (or `slug`'s) Mermaid graph (bot.console.intervention_graph) with
    each step filled by the share of participants (or of `of` of them) who reached it; dead
    steps in red."""
    drawn = draw(facts.root, slug or facts.slug)
    if drawn.source is None:
        return None
    total = max(len(facts.run.names) if of is None else of, 1)
    lines = [drawn.source.rstrip("\n")]
    for row in steps_found["steps"]:
        share = row["participants"] / total
        fill = "#ef9a9a" if share == 0 else _green(share)
        lines.append(f"  style {node_id('s', row['step'])} fill:{fill}")
    return "\n".join(lines) + "\n"


def _green(share: float) -> str:
    level = int(235 - 135 * share)
    return f"#{level:02x}{230:02x}{level:02x}"


def write(
    report: dict[str, Any], folder: Path, timings: dict[str, Any] | None = None
) -> tuple[Path, Path]:
    """report.json and report.html in `folder`, which a seed repeats byte for byte; and, when
    there are timings, timings.json and timings.html (the slowest turns: wall-clock, which
    varies run to run, so kept out of both and linked from report.html)."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "report.json"
    data.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    link = ""
    if timings is not None:
        text = json.dumps(timings, indent=2, sort_keys=True) + "\n"
        (folder / "timings.json").write_text(text, encoding="utf-8")
        slow = "\n".join(sim_pages.slowest(timings))
        (folder / "timings.html").write_text(_page("Slowest turns", slow), encoding="utf-8")
        link = (
            "<p>The slowest turns (wall-clock time, which varies from run to run): "
            "<a href='timings.html'>timings.html</a>, <a href='timings.json'>timings.json</a>.</p>"
        )
    page = folder / "report.html"
    page.write_text(html(report, link), encoding="utf-8")
    return data, page


def html(report: dict[str, Any], end: str = "") -> str:
    """The report as one page: a table per section, numbers as text, everything escaped;
    `end` (HTML) after the sections."""
    s = report["summary"]
    title = f"Simulation of {s['target']}: {s['participants']} participants, {s['days']} days"
    return _page(title, body(report) + ("\n" + end if end else ""))


def _page(title: str, content: str) -> str:
    head = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:60rem;margin:auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
        ".dead{background:#ef9a9a}</style></head><body>",
    ]
    return "\n".join([*head, content, "</body></html>\n"])


def body(report: dict[str, Any]) -> str:
    """The report's sections (the page's body; the console shows the same)."""
    s = report["summary"]
    title = f"Simulation of {s['target']}: {s['participants']} participants, {s['days']} days"
    parts = [
        f"<h1>{escape(title)}</h1>",
        _table(["", ""], [[k, v] for k, v in s.items()]),
        "<h2>Steps</h2>",
    ]
    rows, dead = [], set(report["steps"]["dead_steps"])
    total = max(s["participants"], 1)
    for row in report["steps"]["steps"]:
        colour = "#ef9a9a" if row["step"] in dead else _green(row["participants"] / total)
        moves = "; ".join(
            f"-> {t['to']}" + (f" when {t['when']}" if t["when"] else "") + f": {t['participants']}"
            for t in row["transitions"]
        )
        rows.append(
            (colour, [row["step"], row["participants"], row["entries"], row["turns"], moves])
        )
    parts.append("<table><tr><th>step</th><th>participants</th><th>entries</th><th>turns</th>")
    parts.append("<th>transitions (participants)</th></tr>")
    for colour, cells in rows:
        tds = "".join(f"<td>{escape(str(c))}</td>" for c in cells)
        parts.append(f"<tr style='background:{colour}'>{tds}</tr>")
    parts.append("</table>")
    dead_t = report["steps"]["dead_transitions"]
    parts.append(f"<p>Dead steps: {escape(', '.join(sorted(dead)) or 'none')}. ")
    parts.append(f"Transitions never taken: {escape(', '.join(dead_t) or 'none')}.</p>")
    if report.get("graph"):
        parts.append("<details><summary>Graph (Mermaid source, coloured by reach)</summary>")
        parts.append(f"<pre>{escape(report['graph'])}</pre></details>")
    b = report["burden"]
    parts.append("<h2>Burden</h2>")
    parts.append(
        _table(["per participant per day", ""], list(b["per_participant_per_day"].items()))
    )
    parts.append(_table(["day", "messages"], list(enumerate(b["per_day_total"], 1))))
    parts.append(_table(["local hour", "messages"], list(enumerate(b["per_local_hour"]))))
    parts.append(
        f"<p>Quiet hours {escape(str(b['quiet_hours']))}: "
        f"<strong>{b['quiet_hours_violations']}</strong> violations. WhatsApp 24-hour window: "
        f"<strong>{b['window_violations']}</strong> violations; {b['template_sends']} template "
        "sends.</p>"
    )
    parts.append("<h2>Drop-off by persona</h2>")
    parts.append(_nested(report["dropoff"], "where they stopped"))
    parts.append("<h2>Alerts</h2>")
    parts.append(f"<p>{report['alerts']['raised']} raised.</p>")
    parts.append(_table(["alert", "times"], list(report["alerts"]["by_kind"].items())))
    parts.append("<h2>Failures</h2>")
    parts.append(f"<p>{report['failures']['total']} failures.</p>")
    f_rows = [
        [r["event"], r["where"], r["step"], r["times"], r["participants"]]
        for r in report["failures"]["failures"]
    ]
    parts.append(_table(["event", "file:line", "step", "times", "participants"], f_rows))
    parts.append("<h2>What the personas sent</h2>")
    parts.append(_nested(report["replies"], "kind"))
    if "arms" in report:
        parts.append(sim_arms.html(report["arms"]))
    for name in ("decisions", "instruments", "llm_personas"):
        if name in report:
            parts.append(f"<h2>{'LLM personas' if name == 'llm_personas' else name.title()}</h2>")
            parts.append(_nested(report[name], "value"))
    parts.extend(sim_pages.sections(report))
    return "\n".join(parts)


def _table(head: list[str], rows: list[Any]) -> str:
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><tr>{th}</tr>{body}</table>"


def _nested(data: dict[str, dict[str, Any]], what: str) -> str:
    rows = [[outer, inner, count] for outer, d in data.items() for inner, count in d.items()]
    return _table(["", what, "count"], rows)
