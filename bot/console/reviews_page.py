"""The review queue: messages the learned line scored in its review band, each quoted, cleared
with one click as "not a crisis" or "escalate to alert" (bot.services.reviews), by whoever
may read alerts (supervisors, researchers, admins)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import current_app, redirect, render_template, url_for

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.conversation.reviews import Routing
from bot.services import reviews
from bot.services.refusal import Refused
from bot.store.reads.reviews import queue_rows

log = logging.getLogger(__name__)


@console.route("/reviews", endpoint="reviews")
@requires("alerts")
def review_queue() -> Any:
    return _page()


@console.route("/reviews/<alert_id>/dismiss", methods=["POST"])
@requires("alerts")
def dismiss(alert_id: str) -> Any:
    return _answer(
        alert_id,
        lambda: reviews.dismiss(services().store, alert_id, actor=actor(), via="console"),
    )


@console.route("/reviews/<alert_id>/escalate", methods=["POST"])
@requires("alerts")
def escalate(alert_id: str) -> Any:
    return _answer(
        alert_id,
        lambda: reviews.escalate(
            services().store,
            alert_id,
            actor=actor(),
            via="console",
            routing=_routing(),
            now=services().clock.now(),
        ),
    )


def _answer(alert_id: str, act: Callable[[], object]) -> Any:
    try:
        act()
    except Refused as exc:
        if exc.kind == "not_found":
            return refused(404, "No review item with this id.")
        return _page(f"This review item: {exc.message}."), 409
    log.info("console: review item %s cleared", alert_id)
    return redirect(url_for("console.reviews"))


def _page(problem: str | None = None) -> str:
    store = services().store
    return render_template(
        "console/reviews.html",
        rows=queue_rows(store),
        cleared=queue_rows(store, cleared=True)[:20],
        minutes=services().settings.review_escalate_minutes,
        problem=problem,
    )


def _routing() -> Routing:
    """Who hears of a crisis alert (bot.services.reviews.routing), built once per app."""
    found = current_app.extensions["tandem_console"]
    if "routing" not in found:
        found["routing"] = reviews.routing(services().settings, found["interventions"])
    routing: Routing = found["routing"]
    return routing
