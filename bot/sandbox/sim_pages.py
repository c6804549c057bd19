"""The report page's sections for time to completion, forms, adherence, LLM calls and cost,
and the slowest turns (bot.sandbox.sim_report.html): numbers as text, everything escaped."""

from __future__ import annotations

from html import escape
from typing import Any


def sections(report: dict[str, Any]) -> list[str]:
    """The HTML of each of these sections the report has, in order."""
    parts: list[str] = []
    if "completion" in report:
        parts += completion(report["completion"])
    if "forms" in report:
        parts += forms(report["forms"])
    if "adherence" in report:
        parts += adherence(report["adherence"])
    if "llm" in report:
        parts += llm(report["llm"])
    if report.get("timings"):
        parts += slowest(report["timings"])
    return parts


def completion(found: dict[str, Any]) -> list[str]:
    ends = ", ".join(found["end_steps"]) or "none: nobody can complete this intervention"
    rows = [_finished("(all)", found["overall"])]
    rows += [_finished(name, row) for name, row in found["by_persona"].items()]
    head = ["persona", "completed", "not finished", "days median", "days p90", "days max"]
    return [
        "<h2>Time to completion</h2>",
        f"<p>End steps: {escape(ends)}. Days from enrollment to an end step.</p>",
        table(head, rows),
    ]


def _finished(name: str, row: dict[str, Any]) -> list[Any]:
    days = row["days"]
    return [name, row["completed"], row["not_finished"], days["median"], days["p90"], days["max"]]


def forms(found: dict[str, Any]) -> list[str]:
    head = ["form", "started", "completed", "abandoned", "extractions", "failed", "rejected"]
    head += ["minutes median", "minutes p90", "minutes max"]
    rows = []
    for name, row in found.items():
        took = row["minutes_to_complete"]
        rows.append(
            [name, row["started"], row["completed"], row["abandoned"], row["extractions"]]
            + [row["failed_extractions"], row["rejected"], took["median"], took["p90"], took["max"]]
        )
    return [
        "<h2>Forms</h2>",
        "<p>Abandoned: started but not complete when the run ended.</p>",
        table(head, rows),
    ]


def adherence(found: dict[str, Any]) -> list[str]:
    parts = ["<h2>Measurement adherence</h2>"]
    if found["questions"]:
        rows = [
            [k, r["sent"], r["answered"], r["missed"], r["rejected"], r["adherence"]]
            for k, r in found["questions"].items()
        ]
        head = ["question", "asked", "answered", "missed", "rejected answers", "adherence"]
        parts.append(table(head, rows))
    if found["instruments"]:
        rows = [
            [k, r["sent"], r["answered"], r["abandoned"], r["adherence"]]
            for k, r in found["instruments"].items()
        ]
        parts.append(table(["questionnaire", "sent", "completed", "abandoned", "adherence"], rows))
    rows = [[k, r["sent"], r["answered"], r["adherence"]] for k, r in found["by_persona"].items()]
    parts.append(table(["persona", "sent", "answered", "adherence"], rows))
    return parts


def llm(found: dict[str, Any]) -> list[str]:
    parts = ["<h2>LLM calls and cost</h2>"]
    if not found["calls"]:
        return [*parts, "<p>No LLM calls.</p>"]
    cost = found["cost"]
    priced = "nothing priced" if cost is None else f"{cost} {found['currency']}"
    parts.append(
        f"<p>{found['calls']} calls, {found['failed']} failed; tokens in {found['tokens_in']}, "
        f"out {found['tokens_out']}. Cost: <strong>{escape(priced)}</strong> "
        f"(prices: {escape(found['prices'])}).</p>"
    )
    if found["unpriced_models"]:
        models = found["by_model"]
        unpriced = ", ".join(
            f"{m} ({models[m]['tokens_in']} in, {models[m]['tokens_out']} out)"
            for m in found["unpriced_models"]
        )
        parts.append(f"<p><strong>No declared price</strong>: {escape(unpriced)}.</p>")
    head = ["model", "calls", "failed", "tokens in", "tokens out", "cost"]
    rows = [
        [m, r["calls"], r["failed"], r["tokens_in"], r["tokens_out"], _cost(r)]
        for m, r in found["by_model"].items()
    ]
    parts.append(table(head, rows))
    rows = [
        [r["purpose"], r["model"], r["calls"], r["failed"], r["tokens_in"], r["tokens_out"]]
        for r in found["by_purpose"]
    ]
    parts.append(table(["purpose", "model", "calls", "failed", "tokens in", "tokens out"], rows))
    return parts


def _cost(row: dict[str, Any]) -> Any:
    return row["cost"] if row["priced"] else "no declared price"


def slowest(found: dict[str, Any]) -> list[str]:
    turns, latency = found["turns"], found["llm_latency_ms"]
    parts = [
        "<h2>Slowest turns</h2>",
        "<p>Wall-clock time on the machine that ran it, from timings.json: it varies from run "
        "to run, unlike the rest of this report.</p>",
        f"<p>{turns['count']} turns, {turns['total_seconds']} s in all; median "
        f"{turns['median_ms']} ms, p90 {turns['p90_ms']} ms, max {turns['max_ms']} ms. "
        f"LLM calls timed: {latency['calls']} (median {latency['median']} ms, "
        f"max {latency['max']} ms).</p>",
    ]
    head = ["ms", "participant", "persona", "turn", "step", "at (simulated)"]
    rows = [
        [r["ms"], r["participant"], r["persona"], r["turn"], r["step"], r["at"]]
        for r in found["slowest"]
    ]
    parts.append(table(head, rows))
    return parts


def table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{escape(str(h))}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><tr>{th}</tr>{body}</table>"
