"""The Decisions page: each micro-randomised decision's availability, its options chosen
against their logged probabilities, outcomes by option, and a warning when the choices drift
from the logged probabilities (bot.analysis.monitor)."""

from __future__ import annotations

from typing import Any

from flask import render_template

from bot.analysis.monitor import DRIFT_ALPHA
from bot.console.blueprint import console, services
from bot.console.guard import requires
from bot.services.decision_monitor import decision_summaries


@console.route("/decisions")
@requires("participants")
def decisions() -> Any:
    found = decision_summaries(services().store)
    return render_template("console/decisions.html", decisions=found, alpha=DRIFT_ALPHA)
