"""The study overview page: participants, messages, adherence and what needs attention."""

from __future__ import annotations

from typing import Any

from flask import render_template

from bot.console import charts, study_arms, study_numbers
from bot.console.blueprint import console, services
from bot.console.guard import requires


@console.route("/study")
@requires("participants")
def study() -> Any:
    store = services().store
    with store.reading() as conn:
        numbers = study_numbers.overview(conn, services().clock.now())
    return render_template(
        "console/study.html",
        n=numbers,
        allocations=study_arms.overview(),
        window_days=study_numbers.ACTIVE_WINDOW.days,
        status_chart=charts.bars(numbers.by_status),
        intervention_chart=charts.bars(numbers.by_intervention),
        message_chart=charts.daily(numbers.days, numbers.messages),
        adherence_charts={
            name: charts.daily(numbers.days, series) for name, series in numbers.adherence.items()
        },
    )
