"""The study overview page: participants, messages, adherence and what needs attention."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from flask import render_template

from bot.console import arm_view, charts, study_arms, study_numbers
from bot.console.blueprint import console, services
from bot.console.guard import requires
from bot.services import readiness
from bot.store.reads.attention import attention


@console.route("/study")
@requires("study")
def study() -> Any:
    store, now = services().store, services().clock.now()
    with store.reading() as conn:
        numbers = study_numbers.overview(conn, now)
        trouble = attention(conn, now, timedelta(days=study_numbers.DAYS))
    states = readiness.states(store, services().settings, now)
    return render_template(
        "console/study.html",
        n=numbers,
        allocations=study_arms.overview(),
        trouble=trouble,
        attention_days=study_numbers.DAYS,
        degraded=[s for s in states if s.degraded],
        window_days=study_numbers.ACTIVE_WINDOW.days,
        status_chart=charts.bars(numbers.by_status),
        intervention_chart=charts.bars(_by_intervention(numbers.by_intervention)),
        message_chart=charts.daily(numbers.days, numbers.messages),
        adherence_charts={
            name: charts.daily(numbers.days, series) for name, series in numbers.adherence.items()
        },
    )


def _by_intervention(counts: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Participants per intervention, the interventions of arms blinded for this role counted
    together (apart, they would give each arm's size)."""
    hidden = arm_view.hidden_interventions()
    shown = [(name, n) for name, n in counts if name not in hidden]
    together = sum(n for name, n in counts if name in hidden)
    return shown + ([(arm_view.HIDDEN, together)] if together else [])
