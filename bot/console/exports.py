"""Exports from the console: `tandem export`'s files, streamed as they are read, and its
codebook (of the interventions the participants are in); each download is recorded as
`export.written` (as `tandem export` records its files) naming the staff member."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, render_template, request

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.reporting import codebook
from bot.reporting.export import (
    FILES,
    SYSTEM_STREAM,
    intervention_slugs,
    parse_since,
    stream_file,
)
from bot.store.event_types.exports import ExportWritten
from bot.store.events import NewEvent

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
    if name not in FILES or fmt not in TYPES:
        return refused(
            404,
            f"No export {name}.{fmt}: the files are {', '.join(FILES)}, as csv or jsonl, "
            "and codebook.md or codebook.json.",
        )
    since_text = request.args.get("since", "").strip()
    try:
        since = parse_since(since_text) if since_text else None
    except ValueError as exc:
        return refused(400, f"since: {exc}")
    log.info("console: %s.%s exported", name, fmt)
    # The stream runs after the request has ended: the actor is read now.
    body = stream_file(services().store, name, fmt, since=since, actor=actor())  # type: ignore[arg-type]  # fmt checked against the formats above
    response = Response(body, mimetype=TYPES[fmt].split(";")[0], content_type=TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def codebook_file(fmt: str) -> Any:
    """codebook.md or codebook.json, as `tandem export` writes it, recorded like a download."""
    store = services().store
    exported = ExportWritten(
        format=fmt,
        files=[f"codebook.{fmt}"],
        pseudonymised=False,
        free_text="keep",
        participants=0,
        messages=0,
        events=0,
    )
    store.append(SYSTEM_STREAM, [NewEvent(exported, meta={"actor": actor()})])
    root = current_app.extensions["tandem_console"]["interventions"]
    text = codebook.documents(root, intervention_slugs(store))[f"codebook.{fmt}"]
    response = Response(text, content_type=CODEBOOK[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="codebook.{fmt}"'
    return response
