"""The console's Flask blueprint, which every page module adds its routes to."""

from __future__ import annotations

from flask import Blueprint, current_app, g

from bot.console import guard, roles, security_headers
from bot.store.reads import reviews, simulation_report
from bot.store.reads.alerts_inbox import open_count
from bot.store.services import Services

console = Blueprint(
    "console",
    __name__,
    url_prefix="/console",
    template_folder="templates",
    static_folder="static",
)
console.before_request(guard.before_request)
console.after_request(security_headers.add)


def services() -> Services:
    return current_app.extensions["tandem"]


@console.app_context_processor
def _template_globals() -> dict[str, object]:
    return {
        "csrf_token": guard.csrf_token,
        "allowed": lambda need: g.get("staff") is not None and roles.allowed(g.staff["role"], need),
        "open_alerts": lambda: open_count(services().store, supervisor=supervisor_only()),
        "open_reviews": lambda: reviews.open_count(services().store),
        "simulated": lambda: simulation_report.recorded(services().store),
    }


def supervisor_only() -> bool:
    """Whether the signed-in staff member sees only alerts that ask supervisors to act (a
    role with alerts but not participants: supervisors)."""
    staff = g.get("staff")
    return staff is None or not roles.allowed(staff["role"], "participants")
