"""Alerts for supervisors and operators: crisis language, judgements, stuck work, lost sends."""

from __future__ import annotations

from typing import Literal

from bot.store.events import EventData, event


@event("alert.raised")
class AlertRaised(EventData):
    alert_id: str
    kind: Literal["crisis", "judgement", "tool", "work_parked", "send_unknown", "condition"]
    summary: str
    severity: Literal["info", "warning", "critical"] = "warning"
    rule: str | None = None
    notify_supervisors: bool = False
