"""Exports from the console: `tandem export`'s three files, streamed as they are read, each
download recorded as `export.written` (as `tandem export` records its files) naming the staff
member."""

from __future__ import annotations

import logging
from typing import Any

from flask import Response, render_template, request

from bot.console.blueprint import console, services
from bot.console.guard import actor, refused, requires
from bot.store.export import FILES, parse_since, stream_file

log = logging.getLogger(__name__)
TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


@console.route("/export")
@requires("export")
def export_page() -> Any:
    since = request.args.get("since", "").strip()
    return render_template("console/export.html", files=FILES, formats=TYPES, since=since)


@console.route("/export/<name>.<fmt>")
@requires("export")
def export_file(name: str, fmt: str) -> Any:
    if name not in FILES or fmt not in TYPES:
        return refused(
            404,
            f"No export {name}.{fmt}: the files are participants, messages and "
            "events, as csv or jsonl.",
        )
    since_text = request.args.get("since", "").strip()
    try:
        since = parse_since(since_text) if since_text else None
    except ValueError as exc:
        return refused(400, f"since: {exc}")
    log.info("console: %s.%s exported", name, fmt)
    # The stream runs after the request has ended: the actor is read now.
    body = stream_file(services().store, name, fmt, since=since, actor=actor())  # type: ignore[arg-type]
    response = Response(body, mimetype=TYPES[fmt].split(";")[0], content_type=TYPES[fmt])
    response.headers["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response
