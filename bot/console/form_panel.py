"""A participant's forms on their page: each field's value and where it came from, and the
clock (fields known/wanted, critical known/total, missing, turns and each domain against its
target), computed by `bot.interventions.interpreter.forms` exactly as prompts, conditions
and the API see it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.interventions.interpreter.forms import clock, fields
from bot.interventions.language.intervention import Intervention
from bot.store.projections.participant_forms import state


def panels(intervention: Intervention | None, row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One panel per form the participant's intervention declares (none without forms)."""
    if intervention is None:
        return []
    shown = []
    for name, form in intervention.forms.items():
        now = state(dict(row), name)
        values = now.get("values") or {}
        sources = now.get("sources") or {}
        shown.append(
            {
                "name": name,
                "title": form.title or name,
                "complete": bool(now.get("completed")),
                "clock": clock(form, now),
                "fields": [
                    {
                        "key": key,
                        "value": values.get(key),
                        "type": spec.type,
                        "domain": spec.domain,
                        "critical": spec.critical,
                        "added": key in (now.get("added") or {}),
                        "set_at": (sources.get(key) or {}).get("at"),
                    }
                    for key, spec in fields(form, now).items()
                ],
                "rejected": list(now.get("rejected") or []),
            }
        )
    return shown
