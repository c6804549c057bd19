"""The broadcasts page (admins and researchers): a form with a dry run, the broadcasts with
their progress, and cancelling one; the same service as the API and `tandem broadcast`."""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app, redirect, render_template, request, url_for

from bot.console import arm_view
from bot.console.blueprint import console, services
from bot.console.guard import actor, requires
from bot.interventions.validation.catalogue import Catalogue
from bot.services import broadcasts
from bot.services.blinding import Viewer
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
FIELDS = (
    "message",
    "step",
    "title",
    "study",
    "arm",
    "intervention",
    "status",
    "condition",
    "time",
)


@console.route("/broadcasts", endpoint="broadcasts")
@requires("broadcasts")
def broadcasts_page() -> Any:
    return _page({}, None, None)


@console.route("/broadcasts", methods=["POST"], endpoint="broadcast_create")
@requires("broadcasts")
def broadcast_create() -> Any:
    form = {name: request.form.get(name, "").strip() for name in FIELDS}
    dry_run = request.form.get("action") != "send"
    s = services()
    try:
        planned = broadcasts.create(
            s.store,
            _catalogue(),
            _request(form),
            actor=actor(),
            now=s.clock.now(),
            dry_run=dry_run,
            viewer=_viewer(),
        )
    except Refused as exc:
        return _page(form, None, str(exc)), 400
    if dry_run:
        return _page(form, planned, None)
    log.info("console: broadcast %s created", planned.broadcast_id)
    return redirect(url_for("console.broadcasts"))


@console.route("/broadcasts/<broadcast_id>/cancel", methods=["POST"])
@requires("broadcasts")
def broadcast_cancel(broadcast_id: str) -> Any:
    try:
        broadcasts.cancel(services().store, broadcast_id, actor=actor())
    except Refused as exc:
        return _page(
            {}, None, f"This broadcast: {exc.message}."
        ), 404 if exc.kind == "not_found" else 409
    return redirect(url_for("console.broadcasts"))


def _request(form: dict[str, str]) -> dict[str, Any]:
    send_at = {"mode": "local", "time": form["time"]} if form["time"] else {"mode": "now"}
    keys = ("study", "arm", "intervention", "status", "condition")
    return {
        "message": form["message"],
        "step": form["step"] or None,
        "title": form["title"] or None,
        "filter": {key: form[key] or None for key in keys},
        "send_at": send_at,
    }


def _page(form: dict[str, str], planned: broadcasts.Planned | None, problem: str | None) -> str:
    rows = broadcasts.listing(services().store, viewer=_viewer())
    return render_template(
        "console/broadcasts.html", rows=rows, form=form, planned=planned, problem=problem
    )


def _viewer() -> Viewer:
    """The staff member's role, so that no arm of a study blinded for it is a filter."""
    key = services().settings.master_key
    return Viewer(arm_view.role() or "supervisor", arm_view.catalogue(), key)


def _catalogue() -> Catalogue:
    """The API's catalogue, or the console's folder of interventions."""
    found = current_app.extensions.get("tandem.interventions")
    if isinstance(found, Catalogue):
        return found
    return Catalogue(current_app.extensions["tandem_console"]["interventions"])
