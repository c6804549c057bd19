"""An intervention's Mermaid graph for the console, with one participant's step highlighted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.interventions.language.graph import mermaid, node_id
from bot.interventions.language.intervention import Intervention
from bot.interventions.language.loader import read_intervention

HIGHLIGHT = "style {node} fill:#ffd54f,stroke:#e65100,stroke-width:4px"
_cache: dict[str, tuple[tuple[float, ...], Drawn]] = {}


@dataclass(frozen=True)
class Drawn:
    """The graph's source, or why there is none (a problem a researcher must see), and the
    intervention as read (None when it could not be)."""

    source: str | None
    problems: tuple[str, ...]
    steps: frozenset[str]
    intervention: Intervention | None = None


def draw(root: Path, slug: str) -> Drawn:
    """The intervention's graph, read again only when one of its files changed."""
    folder = root / slug
    if not folder.is_dir():
        return Drawn(None, (f"no intervention folder {slug!r} under {root}",), frozenset())
    stamp = tuple(sorted(p.stat().st_mtime for p in folder.rglob("*") if p.is_file()))
    cached = _cache.get(slug)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    intervention, problems = read_intervention(folder)
    shown = tuple(str(p) for p in problems)
    if intervention is None:
        drawn = Drawn(None, shown or ("the intervention could not be read",), frozenset())
    else:
        drawn = Drawn(mermaid(intervention), shown, frozenset(intervention.steps), intervention)
    _cache[slug] = (stamp, drawn)
    return drawn


def highlighted(drawn: Drawn, step: str | None) -> str | None:
    """The source with `step` marked; unchanged when the participant is not in a known step."""
    if drawn.source is None or not step or step not in drawn.steps:
        return drawn.source
    return drawn.source + "  " + HIGHLIGHT.format(node=node_id("s", step)) + "\n"
