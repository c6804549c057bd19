"""The participants page: the table with search, filters, sorting and paging."""

from __future__ import annotations

from typing import Any

from flask import render_template, request

from bot.console import arm_view, participant_query
from bot.console.blueprint import console, services
from bot.console.guard import requires


@console.route("/participants")
@requires("participants")
def participants() -> Any:
    filters = participant_query.Filters.parse(request.args)
    hidden = arm_view.hidden_interventions()
    if filters.intervention in hidden:
        filters.problems["intervention"] = "a blinded study's interventions are not a filter"
        filters.intervention = ""
    with services().store.reading() as conn:
        rows, total = participant_query.page(conn, filters)
        choices = participant_query.choices(conn)
    choices["interventions"] = [i for i in choices["interventions"] if i not in hidden]
    pages = max(1, -(-total // filters.per))
    code = 400 if filters.problems else 200
    return render_template(
        "console/participants.html",
        rows=arm_view.masked_rows(rows),
        total=total,
        pages=pages,
        f=filters,
        choices=choices,
        statuses=participant_query.STATUSES,
        sorts=participant_query.SORTS,
        args=request.args.to_dict(),
    ), code
