"""The participant timeline's words: one readable line per event, its data as JSON on demand.

A researcher scans the timeline for what happened ("step entered: tip", "alert raised: crisis");
the event's data stays one click away, printed as JSON with its own characters (never `\\u0027`).
"""

from __future__ import annotations

import json

from bot.console.blueprint import console

# The data field that says most about an event, first found wins.
DETAIL_KEYS = ("step", "kind", "status", "form", "instrument", "reason", "role", "format")


@console.app_template_filter("event_summary")
def event_summary(event_type: str, data: object) -> str:
    """`step.entered` with `{"step": "tip"}` → "step entered: tip"."""
    words = event_type.replace(".", " ").replace("_", " ")
    if isinstance(data, dict):
        for key in DETAIL_KEYS:
            value = data.get(key)
            if isinstance(value, str | int) and not isinstance(value, bool) and value != "":
                return f"{words}: {value}"
    return words


@console.app_template_filter("readable_json")
def readable_json(data: object) -> str:
    """Indented JSON keeping non-ASCII and quotes as they are (the page escapes it for HTML)."""
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str)
