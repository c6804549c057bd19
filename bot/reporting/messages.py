"""messages.csv's records of one participant, made from their stored message events.

Most rows are read from the stored payload itself (a dict), without building the event's model
or a transcript line: a payload stored at its model's current schema version, with exactly the
model's fields, was validated when it was appended, so the fields a line reads are what the
model would hold, once their types are checked. Any other row (an older schema version that
needs its upcaster, erased data, a field missing or of another type) is decoded into its model
and made into a line as the transcript makes it (bot.reporting.transcript); both give the same
record (tests/store/test_export_messages.py holds them to it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, get_args

from bot.reporting.cells import (
    FORMULA_START,
    csv_cell,
    csv_cells,
    csv_line,
    iso,
    naive,
    quoted,
    to_json,
)
from bot.reporting.columns import MESSAGE_FILE
from bot.reporting.transcript import (
    LINE_TYPES,
    TranscriptLine,
    inbound_line,
    local,
    outbound_line,
    segment_count,
    zone,
)
from bot.store.event_types.messages import MessageKind, MessageQueued, MessageReceived, MessageSent
from bot.store.event_types.participants import Channel
from bot.store.events import Event, EventData, participant_of

RECEIVED, QUEUED, SENT = (m.event_type for m in (MessageReceived, MessageQueued, MessageSent))
# The event types a participant's messages are made from.
MESSAGE_TYPES = (*LINE_TYPES, SENT)
_CHANNELS = frozenset(get_args(Channel))
_KINDS = frozenset(get_args(MessageKind))
# The keywords of `Literal[...] | None`.
_KEYWORDS = frozenset(get_args(get_args(MessageReceived.model_fields["keyword"].annotation)[0]))
_MEDIA_FIELDS = {"url", "content_type"}


def _is_media(items: object) -> bool:
    return type(items) is list and all(
        type(m) is dict and m.keys() == _MEDIA_FIELDS and type(m["url"]) is str for m in items
    )


def _optional_text(value: object) -> bool:
    return value is None or type(value) is str


# Per type: its model, and whether a stored payload's fields read as the model reads them.
_CHECKS: dict[str, tuple[type[EventData], Callable[[dict[str, Any]], bool]]] = {
    RECEIVED: (
        MessageReceived,
        lambda d: (
            type(d["message_sid"]) is str
            and d["channel"] in _CHANNELS
            and type(d["body"]) is str
            and (d["keyword"] is None or d["keyword"] in _KEYWORDS)
            and _is_media(d["media"])
        ),
    ),
    QUEUED: (
        MessageQueued,
        lambda d: (
            type(d["outbox_id"]) is str
            and d["channel"] in _CHANNELS
            and d["kind"] in _KINDS
            and _optional_text(d["body"])
            and type(d["to_participant"]) is bool
        ),
    ),
    SENT: (
        MessageSent,
        lambda d: (
            type(d["outbox_id"]) is str and (d["segments"] is None or type(d["segments"]) is int)
        ),
    ),
}
_FIELDS = {kind: frozenset(model.model_fields) for kind, (model, _check) in _CHECKS.items()}


def plain_payload(row: Any) -> dict[str, Any] | None:
    """The row's payload if it reads as its model would (see the module's docstring)."""
    model, check = _CHECKS[row.event_type]
    data = row.data
    if (
        row.schema_version != model.schema_version
        or (row.meta or {}).get("erased")
        or type(data) is not dict
        or data.keys() != _FIELDS[row.event_type]
    ):
        return None
    return data if check(data) else None


def message_records(
    history: Sequence[Any],
    outbox_rows: Mapping[str, Mapping[str, Any]],
    participant: Mapping[str, Any],
    since: datetime | None,
    decode: Callable[[Any], Event],
) -> list[dict[str, Any]]:
    """The records of messages.csv from a participant's opened event rows of MESSAGE_TYPES
    (in stream order): their messages from `since`, with delivery details from `outbox_rows`
    and the segment counts `message.sent` reported; `decode` makes an Event of a row."""
    tz_name = participant["timezone"]
    tz = zone(tz_name)
    reported, lines = _message_rows(history, since, decode)
    records = []
    for row, data in lines:
        if data is None:
            record = _decoded_record(decode(row), outbox_rows, reported, tz_name)
        elif row.event_type == RECEIVED:
            record = _inbound(row, data, tz_name, tz)
        elif data["to_participant"]:
            record = _outbound(row, data, outbox_rows, reported, tz_name, tz)
        else:
            record = None  # for someone other than the participant (an alert, a trace)
        if record is not None:
            records.append(record)
    return records


def message_lines(
    history: Sequence[Any],
    outbox_rows: Mapping[str, Mapping[str, Any]],
    participant: Mapping[str, Any],
    since: datetime | None,
    decode: Callable[[Any], Event],
) -> list[str]:
    """messages.csv's rows of `message_records`' records, as `csv_line` writes each (its
    values in MESSAGE_COLUMNS order), made straight from the plain payloads: a record and
    then its row through `csv_line` cost as much as reading the event. A row
    the plain reading refuses is made into its record, then its row.
    tests/store/test_export_messages.py holds the two ways to the same text."""
    tz_name = participant["timezone"]
    tz, tz_cell = zone(tz_name), csv_cell(tz_name)
    reported, lines = _message_rows(history, since, decode)
    rows: list[str] = []
    stream, pid = None, ""
    for row, data in lines:
        if data is None:
            record = _decoded_record(decode(row), outbox_rows, reported, tz_name)
            if record is not None:
                rows.append(csv_line(map(record.get, MESSAGE_COLUMNS)))
            continue
        if row.stream_id != stream:
            stream, pid = row.stream_id, quoted(participant_of(row.stream_id) or "")
        if row.event_type == RECEIVED:
            rows.append(_inbound_line(row, data, pid, tz_cell, tz, tz_name))
        elif data["to_participant"]:
            rows.append(_outbound_line(row, data, outbox_rows, reported, pid, tz_cell, tz, tz_name))
    return rows


def _message_rows(
    history: Sequence[Any], since: datetime | None, decode: Callable[[Any], Event]
) -> tuple[dict[str, int], list[tuple[Any, dict[str, Any] | None]]]:
    """The segment counts `message.sent` reported (by outbox id), and the rows of messages
    from `since`, each with its plain payload (None: it must be decoded), in order of seq."""
    reported: dict[str, int] = {}
    lines: list[tuple[Any, dict[str, Any] | None]] = []
    for row in history:
        kind = row.event_type
        if kind == SENT:
            data = plain_payload(row)
            if data is None:
                sent = decode(row).data
                outbox_id, count = sent.outbox_id, sent.segments  # type: ignore[attr-defined]  # a SENT row decodes to MessageSent
            else:
                outbox_id, count = data["outbox_id"], data["segments"]
            if count is not None:
                reported[outbox_id] = count
        elif kind in LINE_TYPES and (since is None or row.occurred_at >= since):
            lines.append((row, plain_payload(row)))
    lines.sort(key=lambda pair: pair[0].seq)
    return reported, lines


def _inbound_line(
    row: Any, data: dict[str, Any], pid: str, tz_cell: str, tz: Any, tz_name: str
) -> str:
    """`_inbound`'s record's row (`message_lines`). Its channel and keyword are of the
    model's literals, which need no quotes."""
    at = row.occurred_at
    channel, body, keyword, media = data["channel"], data["body"], data["keyword"], data["media"]
    sid, at_text = quoted(data["message_sid"]), iso(at)
    segments = segment_count(channel, body, None)
    cells = [pid, str(row.seq), sid, "inbound", channel, "message", keyword or "", quoted(body)]
    cells.append(quoted(to_json([m["url"] for m in media])) if media else "[]")
    cells += ["received", "", "", "" if segments is None else str(segments), sid, tz_cell]
    # The raw texts: a quoted one starts with `"` (a message sid of "\r" went undefused).
    if body[:1] in FORMULA_START or data["message_sid"][:1] in FORMULA_START:  # as csv_line
        return csv_line(map(_inbound(row, data, tz_name, tz).get, MESSAGE_COLUMNS))
    there = iso(at.astimezone(tz))
    cells += [at_text, there, there[:19], "", "", "", at_text]  # [:19]: `naive`
    return ",".join(cells) + "\r\n"


def _outbound_line(
    row: Any,
    data: dict[str, Any],
    outbox_rows: Mapping[str, Mapping[str, Any]],
    reported: Mapping[str, int],
    pid: str,
    tz_cell: str,
    tz: Any,
    tz_name: str,
) -> str:
    """`_outbound`'s record's row (`message_lines`); the outbox row's values as `csv_line`
    writes them, in two runs of cells (`csv_cells`: one search for quotes each, not one for
    each cell). Its channel and kind are of the model's literals."""
    at = row.occurred_at
    channel, body, outbox_id = data["channel"], data["body"], data["outbox_id"]
    sent = outbox_rows.get(outbox_id) or {}
    sent_at = sent.get("sent_at")
    segments = segment_count(channel, body, reported.get(outbox_id))
    get = sent.get
    delivery = (get("status") or "pending", get("error_code"), get("error_message"), segments)
    cells = [pid, str(row.seq), quoted(outbox_id), "outbound", channel, data["kind"], ""]
    cells += ["" if body is None else quoted(body), "[]"]
    cells.append(csv_cells((*delivery, get("provider_sid"))))
    if (body or "")[:1] in FORMULA_START or outbox_id[:1] in FORMULA_START:  # to defuse
        record = _outbound(row, data, outbox_rows, reported, tz_name, tz)
        return csv_line(map(record.get, MESSAGE_COLUMNS))
    there = iso(at.astimezone(tz))
    cells += [tz_cell, iso(at), there, there[:19]]  # [:19]: `naive`
    sent_there = None if sent_at is None else iso(sent_at.astimezone(tz))
    sent_wall = None if sent_there is None else sent_there[:19]
    cells.append(csv_cells((sent_at, sent_there, sent_wall, get("updated_at"))))
    return ",".join(cells) + "\r\n"


def _inbound(row: Any, data: dict[str, Any], tz_name: str, tz: Any) -> dict[str, Any]:
    at = row.occurred_at
    channel, body, sid = data["channel"], data["body"], data["message_sid"]
    return {
        "participant_id": participant_of(row.stream_id) or "",
        "seq": row.seq,
        "message_id": sid,
        "direction": "inbound",
        "channel": channel,
        "kind": "message",
        "keyword": data["keyword"],
        "text": body,
        "media": [m["url"] for m in data["media"]],
        "status": "received",
        "error_code": None,
        "error_message": None,
        "segments": segment_count(channel, body, None),
        "provider_sid": sid,
        "timezone": tz_name,
        "created_at_utc": at,
        "created_at_local": (there := local(at, tz)),
        "created_at_local_naive": naive(there),
        "sent_at_utc": None,
        "sent_at_local": None,
        "sent_at_local_naive": None,
        "status_at_utc": at,
    }


def _outbound(
    row: Any,
    data: dict[str, Any],
    outbox_rows: Mapping[str, Mapping[str, Any]],
    reported: Mapping[str, int],
    tz_name: str,
    tz: Any,
) -> dict[str, Any]:
    at = row.occurred_at
    channel, body, outbox_id = data["channel"], data["body"], data["outbox_id"]
    sent = outbox_rows.get(outbox_id) or {}
    sent_at = sent.get("sent_at")
    return {
        "participant_id": participant_of(row.stream_id) or "",
        "seq": row.seq,
        "message_id": outbox_id,
        "direction": "outbound",
        "channel": channel,
        "kind": data["kind"],
        "keyword": None,
        "text": body,
        "media": [],
        "status": sent.get("status") or "pending",
        "error_code": sent.get("error_code"),
        "error_message": sent.get("error_message"),
        "segments": segment_count(channel, body, reported.get(outbox_id)),
        "provider_sid": sent.get("provider_sid"),
        "timezone": tz_name,
        "created_at_utc": at,
        "created_at_local": (there := local(at, tz)),
        "created_at_local_naive": naive(there),
        "sent_at_utc": sent_at,
        "sent_at_local": (sent_there := local(sent_at, tz)),
        "sent_at_local_naive": naive(sent_there),
        "status_at_utc": sent.get("updated_at"),
    }


def _decoded_record(
    ev: Event,
    outbox_rows: Mapping[str, Mapping[str, Any]],
    reported: Mapping[str, int],
    tz_name: str,
) -> dict[str, Any] | None:
    """A message's record made the typed way: its model, then its transcript line."""
    data = ev.data
    if isinstance(data, MessageReceived):
        return message_record(inbound_line(ev, data), tz_name)
    if isinstance(data, MessageQueued) and data.to_participant:
        row = outbox_rows.get(data.outbox_id)
        return message_record(outbound_line(ev, data, row, reported.get(data.outbox_id)), tz_name)
    return None


MESSAGE_COLUMNS = tuple(column.name for column in MESSAGE_FILE)


def message_record(line: TranscriptLine, tz_name: str) -> dict[str, Any]:
    """messages.csv's record of a transcript line."""
    tz = zone(tz_name)
    return {
        **{k: getattr(line, k) for k in MESSAGE_COLUMNS if hasattr(line, k)},
        "media": list(line.media),
        "timezone": tz_name,
        "created_at_utc": line.created_at,
        "created_at_local": (created := local(line.created_at, tz)),
        "created_at_local_naive": naive(created),
        "sent_at_utc": line.sent_at,
        "sent_at_local": (sent := local(line.sent_at, tz)),
        "sent_at_local_naive": naive(sent),
        "status_at_utc": line.status_at,
    }
