"""Exports from the console: `tandem export`'s files, streamed as they are read, and its
codebook (of the interventions the participants are in); each download is recorded as
`export.written` (as `tandem export` records its files) naming the staff member, by
`bot.services.export`."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, render_template, request

from bot.console import arm_view, study_forms
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.reporting.export import FILES
from bot.services import export
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
# The files whose rows name a participant's arm (participant.allocated's data in events).
ARM_FILES = ("participants", "allocations", "events")
TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}
CODEBOOK = {"md": "text/markdown; charset=utf-8", "json": "application/json; charset=utf-8"}


@console.route("/export")
@requires("export")
def export_page() -> Any:
    since = request.args.get("since", "").strip()
    return render_template(
        "console/export.html", files=FILES, formats=TYPES, since=since, codebook=CODEBOOK
    )


@console.route("/export/<name>.<fmt>")
@requires("export")
def export_file(name: str, fmt: str) -> Any:
    if name == "codebook" and fmt in CODEBOOK:
        return codebook_file(fmt)
    if name in ARM_FILES and _blinded_here():
        return refused(
            403,
            f"{name}.{fmt} names each participant's arm, and a study here is blinded for your "
            "role: an admin exports it (or `tandem export`).",
        )
    try:
        # The stream runs after the request has ended: the actor is read now.
        body = export.file_stream(
            services().store,
            name,
            fmt,
            since_text=request.args.get("since", "").strip(),
            actor=actor(),
            interventions=current_app.extensions["tandem_console"]["interventions"],
        )
    except Refused as exc:
        return refused(404 if exc.kind == "not_found" else 400, str(exc))
    log.info("console: %s.%s exported", name, fmt)
    response = Response(body, mimetype=TYPES[fmt].split(";")[0], content_type=TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def codebook_file(fmt: str) -> Any:
    """codebook.md or codebook.json, as `tandem export` writes it, recorded like a download."""
    root = current_app.extensions["tandem_console"]["interventions"]
    text = export.codebook_download(services().store, fmt, interventions=root, actor=actor())
    response = Response(text, content_type=CODEBOOK[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="codebook.{fmt}"'
    return response


def _blinded_here() -> bool:
    """Whether any study of this console hides its arms from this staff member's role (an
    admin, who may unblind, exports them)."""
    if arm_view.role() == "admin":
        return False
    studies = arm_view.catalogue()
    return any(
        arm_view.blinded_for(arm_view.role(), s, studies) for s in study_forms.usable(studies)
    )
