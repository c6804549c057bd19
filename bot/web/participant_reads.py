"""The researcher API's reads: the participant list, one participant, transcript and events."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import urlencode

from flask import Response, request

from bot.reporting.transcript import read_page, zone
from bot.store.reads.participants import participants_page, stream_rows_after
from bot.web.api_models import (
    CursorPage,
    CursorQuery,
    EventListResponse,
    EventOut,
    ListQuery,
    MessageListResponse,
    MessageOut,
    OffsetPage,
    ParticipantListResponse,
    ParticipantPath,
    ParticipantResponse,
)
from bot.web.participant_api import (
    ERRORS,
    api,
    current_services,
    ok,
    participant_out,
    participant_response,
    participant_row,
)


@api.get("", summary="List participants", responses={200: ParticipantListResponse, **ERRORS})
def list_participants(query: ListQuery) -> tuple[Response, int]:
    """Participants in order of enrollment, a page at a time; by status if asked."""
    count, rows = participants_page(
        current_services().store, status=query.status, limit=query.limit, offset=query.offset
    )
    end = query.offset + len(rows)
    more = end < count
    following: dict[str, object] = {"limit": query.limit, "offset": end}
    if query.status:
        following["status"] = query.status
    page = OffsetPage(
        limit=query.limit,
        offset=query.offset,
        total=count,
        next_offset=end if more else None,
        more=more,
        next=f"{request.path}?{urlencode(following)}" if more else None,
    )
    # PromptPipe's list had no pages; a client written for it reads only status and result,
    # so the envelope's message says that this is not everyone.
    message = (
        f"{len(rows)} of {count} participants (from {query.offset + 1}); "
        f"more at {page.next} (limit up to 1000)"
        if more
        else None
    )
    result = [participant_out(dict(r._mapping)) for r in rows]
    return ok(ParticipantListResponse(status="ok", message=message, result=result, page=page))


@api.get(
    "/<participant_id>",
    summary="Get a participant",
    responses={200: ParticipantResponse, **ERRORS},
)
def getparticipant_response(path: ParticipantPath) -> tuple[Response, int]:
    """One participant, unenrolled ones included (status "unenrolled")."""
    return participant_response(participant_row(current_services().store, path.participant_id))


@api.get(
    "/<participant_id>/messages",
    summary="A participant's transcript",
    responses={200: MessageListResponse, **ERRORS},
)
def participant_messages(path: ParticipantPath, query: CursorQuery) -> tuple[Response, int]:
    """Inbound and outbound messages in order, with delivery status, a page at a time."""
    store = current_services().store
    row = participant_row(store, path.participant_id)
    lines, next_after = read_page(store, row["participant_id"], query.after, query.limit)
    tz = zone(row["timezone"])
    result = [
        MessageOut(**asdict(line), created_at_local=line.created_at.astimezone(tz))
        for line in lines
    ]
    page = CursorPage(limit=query.limit, after=query.after, next_after=next_after)
    return ok(MessageListResponse(status="ok", result=result, page=page))


@api.get(
    "/<participant_id>/events",
    summary="A participant's raw event stream",
    responses={200: EventListResponse, **ERRORS},
)
def participant_events(path: ParticipantPath, query: CursorQuery) -> tuple[Response, int]:
    """Every event of the participant's stream, as stored, in order."""
    store = current_services().store
    row = participant_row(store, path.participant_id)
    rows = stream_rows_after(store, row["participant_id"], query.after, query.limit + 1)
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    result = [
        EventOut(
            seq=r.seq,
            event_id=r.event_id,
            stream_version=r.stream_version,
            type=r.event_type,
            schema_version=r.schema_version,
            occurred_at=r.occurred_at,
            recorded_at=r.recorded_at,
            idempotency_key=r.idempotency_key,
            data=r.data,
            meta=r.meta or {},
        )
        for r in rows
    ]
    page = CursorPage(
        limit=query.limit, after=query.after, next_after=rows[-1].seq if more else None
    )
    return ok(EventListResponse(status="ok", result=result, page=page))
