"""The interventions pages: each intervention's validation state, its graph and its files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import current_app, render_template

from bot.console import intervention_graph
from bot.console.blueprint import console, services
from bot.console.guard import refused, requires
from bot.instruments.administration import attach
from bot.interventions.language.loader import read_intervention
from bot.interventions.validation import needs
from bot.interventions.validation.validate import intervention_folders, validate_folder
from bot.runtime.tool_registry import TOOLS
from modules import MODULES

_checked: dict[str, tuple[tuple[float, ...], list[str]]] = {}


def _root() -> Path:
    return current_app.extensions["tandem_console"]["interventions"]


def _stamp(folder: Path) -> tuple[float, ...]:
    return tuple(sorted(p.stat().st_mtime for p in folder.rglob("*") if p.is_file()))


def problems_of(folder: Path) -> list[str]:
    """`tandem interventions validate`'s problems for the folder, checked again on a change."""
    stamp = _stamp(folder)
    cached = _checked.get(folder.name)
    if cached is None or cached[0] != stamp:
        found = validate_folder(folder, TOOLS, [n for n in MODULES if n != "step"], attach)
        cached = _checked[folder.name] = (stamp, [str(p) for p in found])
    return cached[1]


def errors_in(problems: list[str]) -> int:
    """How many of the problems stop the intervention (the rest are warnings)."""
    return sum(": warning: " not in problem for problem in problems)


def needs_of(folder: Path) -> list[str]:
    """What the intervention needs and whether this deployment has it ("needs an LLM — not
    configured: set ..."), as `tandem interventions validate` says it."""
    intervention, _ = read_intervention(folder)
    if intervention is None:
        return []
    return needs.summary(needs.needs_of(intervention), services().settings)


@console.route("/interventions")
@requires("participants")
def interventions() -> Any:
    folders = intervention_folders(_root())
    rows = [
        {
            "slug": f.name,
            "problems": problems_of(f),
            "errors": errors_in(problems_of(f)),
            "needs": needs_of(f),
        }
        for f in folders
    ]
    return render_template("console/interventions.html", rows=rows)


@console.route("/interventions/<slug>")
@requires("participants")
def intervention(slug: str) -> Any:
    folder = _root() / slug
    if slug not in {f.name for f in intervention_folders(_root())}:
        return refused(404, f"No intervention named {slug!r}.")
    files = [
        {"path": str(p.relative_to(folder)), "text": p.read_text(encoding="utf-8")}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.suffix in {".md", ".yaml", ".yml", ".j2"}
    ]
    drawn = intervention_graph.draw(_root(), slug)
    return render_template(
        "console/intervention.html",
        slug=slug,
        problems=problems_of(folder),
        needs=needs_of(folder),
        graph=drawn.source,
        files=files,
    )
