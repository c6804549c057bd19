"""`GET /conversation/participants/{id}/timers`: a participant's timers and daily schedules."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from flask import Response, jsonify
from flask_openapi3 import APIBlueprint, OpenAPI, Tag
from pydantic import BaseModel, ConfigDict, Field

from bot.core.localtime import parse_quiet_hours
from bot.store.events import participant_stream
from bot.store.reads.participants import participant_timers as participant_timers_read
from bot.store.services import Services
from bot.timers.one_shot import zone_of
from bot.timers.quiet_hours import for_participant
from bot.timers.schedules import list_schedules
from bot.web import auth
from bot.web.api_models import ErrorResponse, ParticipantPath, error_response
from bot.web.current import services

TAG = Tag(name="timers", description="Durable timers and daily schedules of a participant")
TimerStatus = Literal["scheduled", "fired", "skipped", "cancelled"]

api = APIBlueprint(
    "participant_timers",
    __name__,
    url_prefix="/conversation/participants",
    abp_tags=[TAG],
    abp_security=auth.SECURITY,
)


class TimersQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: TimerStatus | None = Field(None, description="Only timers in this status.")


class TimerOut(BaseModel):
    id: str
    kind: str
    status: TimerStatus
    due_at: datetime = Field(description="UTC; moved later if quiet hours deferred it.")
    due_at_local: datetime = Field(description="due_at in the participant's timezone.")
    local_time: str | None = Field(description="The local time it was computed from.")
    timezone: str | None
    scope: str
    payload: dict[str, Any]
    scheduled_at: datetime
    fired_at: datetime | None
    late_seconds: float | None
    reason: str | None = Field(description="Why it was deferred, skipped or cancelled.")


class ScheduleOut(BaseModel):
    id: str
    kind: str
    when: str = Field(description='Local "HH:MM", or a window "HH:MM-HH:MM" drawn from daily.')
    payload: dict[str, Any]
    next_timer_id: str | None
    next_due_at: datetime | None
    fires_at: datetime | None = Field(description="When it will really act (quiet hours, status).")
    note: str | None


class TimersResult(BaseModel):
    timers: list[TimerOut]
    schedules: list[ScheduleOut]


class TimersResponse(BaseModel):
    status: Literal["ok"]
    result: TimersResult


def register(app: OpenAPI) -> None:
    """Register the timers API on the app."""
    auth.check_startup(app)
    app.register_api(api)


def _services() -> Services:
    return services()


@api.before_request
def _guard() -> Response | None:
    return auth.require_token(_services().settings)


@api.get(
    "/<participant_id>/timers",
    summary="A participant's timers and daily schedules",
    responses={200: TimersResponse, 400: ErrorResponse, 401: ErrorResponse, 404: ErrorResponse},
)
def participant_timers(path: ParticipantPath, query: TimersQuery) -> tuple[Response, int]:
    """Every timer (soonest first) and every live daily schedule with what will really happen
    next: deferred by quiet hours, or suppressed while the participant is paused."""
    services = _services()
    store = services.store
    try:
        participant_id = str(uuid.UUID(path.participant_id))
    except ValueError:
        return error_response(404, "participant_id: Participant not found")
    person = store.projection_row("participants", participant_id)
    if person is None:
        return error_response(404, "participant_id: Participant not found")
    rows = participant_timers_read(store, participant_id, query.status)
    tz = zone_of(person)
    quiet = for_participant(person, parse_quiet_hours(services.settings.quiet_hours))
    views = list_schedules(store.load(participant_stream(participant_id)), person, quiet)
    result = TimersResult(
        timers=[TimerOut(**_timer(row), due_at_local=row["due_at"].astimezone(tz)) for row in rows],
        schedules=[ScheduleOut(id=v.schedule_id, **_schedule(v)) for v in views],
    )
    body = TimersResponse(status="ok", result=result)
    return jsonify(body.model_dump(mode="json")), 200


def _timer(row: dict[str, Any]) -> dict[str, Any]:
    fields = set(TimerOut.model_fields) - {"id", "due_at_local"}
    return {"id": row["timer_id"], **{name: row[name] for name in fields}}


def _schedule(view: Any) -> dict[str, Any]:
    return {name: getattr(view, name) for name in set(ScheduleOut.model_fields) - {"id"}}
