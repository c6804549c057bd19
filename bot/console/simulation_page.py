"""The Simulation page: the report of the `tandem simulate` run whose database the console is
opened on (`simulation.reported`), its sections as report.html has them."""

from __future__ import annotations

from typing import Any

from flask import render_template
from markupsafe import Markup

from bot.console.blueprint import console, services
from bot.console.guard import requires
from bot.store.reads.simulation_report import latest


@console.route("/simulation")
@requires("participants")
def simulation() -> Any:
    found = latest(services().store)
    if found is None:
        return render_template("console/simulation.html", found=None), 404
    # The sections were rendered by `tandem simulate` (bot.sandbox.sim_report.body) with every
    # value escaped; synthetic participants only, and the page's CSP allows no inline script.
    page = Markup(found.get("page", ""))  # noqa: S704 - escaped when rendered, see above
    return render_template("console/simulation.html", found=found, page=page)
