"""Exports from the console: `tandem export`'s files, streamed as they are read, and its
codebook (of the interventions the participants are in); each download is recorded as
`export.written` (as `tandem export` records its files) naming the staff member, by
`bot.services.export`. A blinded study's arms are shown as the role may see them
(bot.services.blinding.export_arms): admins and statisticians get the arms' codes, researchers
no arm (the `arm` column left out, the intervention blank, and the files made of arms,
allocations and events, refused)."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, render_template, request

from bot.console import arm_view, study_forms
from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.reporting.arm_mask import ARM_FILES
from bot.reporting.export import FILES
from bot.services import export
from bot.services.blinding import CODED_ROLES, export_arms
from bot.services.refusal import Refused

log = logging.getLogger(__name__)
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
            f"{name}.{fmt} is made of each participant's arm, and a study here is blinded for "
            "your role: an admin or statistician exports it with the arms' codes (or "
            "`tandem export`). The other files leave the arm out.",
        )
    arms = export_arms(arm_view.role(), arm_view.catalogue(), services().settings.master_key)
    try:
        # The stream runs after the request has ended: the actor is read now.
        body = export.file_stream(
            services().store,
            name,
            fmt,
            since_text=request.args.get("since", "").strip(),
            actor=actor(),
            interventions=current_app.extensions["tandem_console"]["interventions"],
            arms=arms,
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
    admin or statistician exports them, as codes)."""
    if arm_view.role() in CODED_ROLES:
        return False
    studies = arm_view.catalogue()
    return any(
        arm_view.blinded_for(arm_view.role(), s, studies) for s in study_forms.usable(studies)
    )
