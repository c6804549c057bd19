"""The columns of participants.csv, messages.csv, events.csv and allocations.csv, each typed
and described for the codebook (results, retrievals and forms describe theirs beside their
folds), and the columns an export makes per study: `baseline_<field>`, `p_<arm>` and
`conditional_p_<arm>`.

Times: `<x>_utc` is ISO 8601 in UTC (`+00:00`); `<x>_local` the same instant with the
participant's offset then; `<x>_local_naive` the participant's wall-clock time to the second,
`YYYY-MM-DDTHH:MM:SS`, one format in every row (what `pd.to_datetime` reads without help).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.reporting.results import Column

STATUSES = ("active", "paused", "completed", "withdrawn")
METHODS = ("simple", "blocks", "stratified", "minimisation")
PID = Column("participant_id", "text", "the participant (a study code when pseudonymised)")
STUDY_CODE = Column(
    "study_code", "text", "the participant's stable code (P- and 10 hex digits): pseudonymised"
)


def timed(name: str, what: str, utc: bool = True) -> tuple[Column, ...]:
    """A time's columns: `<name>_utc` (unless `utc` is False), `_local` and `_local_naive`."""
    columns = (Column(f"{name}_utc", "datetime", f"{what}, in UTC"),) if utc else ()
    return (
        *columns,
        Column(f"{name}_local", "datetime", f"{what}, participant-local (with the offset)"),
        Column(f"{name}_local_naive", "naive datetime", f"{what}, the participant's wall clock"),
    )


PARTICIPANT_FILE = (
    PID,
    Column("phone_number", "text", "E.164 phone number (left out when pseudonymised)"),
    Column("channel", "choice", "sms or whatsapp", ("sms", "whatsapp")),
    Column("status", "choice", "the status when exported", STATUSES),
    Column("opted_out", "bool", "whether the participant has opted out of messages now"),
    Column("timezone", "text", "the participant's IANA time zone: the local times' zone"),
    Column("intervention", "text", "the intervention the participant is in"),
    Column("conversation_state", "text", "the conversation's state (intake, active, ...)"),
    Column("current_step", "text", "the step the participant is in"),
    Column("name", "text", "the name given at enrollment (left out when pseudonymised)"),
    Column("gender", "text", "as given at enrollment"),
    Column("ethnicity", "text", "as given at enrollment"),
    Column("background", "text", "background given at enrollment (free text)"),
    Column("debug", "bool", "a staff test participant: leave out of analyses"),
    *timed("enrolled_at", "when the participant was enrolled"),
    *timed("last_inbound_at", "their last message"),
    Column("updated_at_utc", "datetime", "when their row last changed, in UTC"),
    Column("version", "int", "how many events their stream holds"),
    Column("profile", "json", "profile and intake fields (object; see profile.* variables)"),
    Column("step_counters", "json", "turns taken in each step (object)"),
    Column("judgements", "json", "the latest result of each judgement (see judgements.*)"),
    Column("notes", "json", "the latest value of each note slot (see notes.*)"),
    *timed("withdrawn_at", "when the participant withdrew (blank if not)"),
    Column("withdrawn_reason", "text", "why, as recorded (free text)"),
    *timed("opted_out_at", "when they opted out, if opted out now (blank if not)"),
    Column(
        "opted_out_reason",
        "choice",
        "how: a STOP keyword, the provider's opt-out type, error 21610, or an operator",
        ("keyword", "opt_out_type", "error_21610", "operator"),
    ),
    *timed("erased_at", "when their personal data was erased (blank if not)"),
    Column("erased_reason", "text", "why, as recorded"),
    Column("study", "text", "the study the participant was allocated in (blank if none)"),
    Column(
        "arm",
        "text",
        "the arm allocated (the latest stage's), by name; a blinded study's as its code (or "
        "left out, for a researcher)",
    ),
    *timed("allocated_at", "when that allocation was made"),
    Column("stratum", "text", "the stratum the allocation was drawn in (blank if none)"),
)
MESSAGE_FILE = (
    PID,
    Column("seq", "int", "the message event's place in the event log (identifies the message)"),
    Column(
        "message_id",
        "text",
        "the outbox id (outbound) or provider id (inbound): left out when pseudonymised",
    ),
    Column("direction", "choice", "inbound or outbound", ("inbound", "outbound")),
    Column("channel", "choice", "sms or whatsapp", ("sms", "whatsapp")),
    Column("kind", "text", "what an outbound message was (message, question, reminder, ...)"),
    Column("keyword", "text", "the keyword an inbound message was (STOP, START, HELP, ...)"),
    Column("text", "text", "the message (free text)"),
    Column("media", "json", "the media URLs (list); each `[media]` when pseudonymised"),
    Column("status", "text", "received, or the delivery status (queued, sent, delivered, ...)"),
    Column("error_code", "text", "the provider's error code (blank if none)"),
    Column("error_message", "text", "the provider's error message"),
    Column("segments", "int", "SMS segments (billed units)"),
    Column("provider_sid", "text", "the provider's message id (left out when pseudonymised)"),
    Column("timezone", "text", "the participant's IANA time zone"),
    *timed("created_at", "when the message was received or queued"),
    *timed("sent_at", "when it was handed to the provider (outbound)"),
    Column("status_at_utc", "datetime", "when the status was last reported, in UTC"),
)
EVENT_FILE = (
    Column("seq", "int", "the event's place in the event log"),
    Column("event_id", "text", "the event's id"),
    Column("stream_id", "text", "its stream: participant-<id>, or system"),
    Column("stream_version", "int", "its place in the stream"),
    Column("type", "text", "the event type (docs/api.md lists them)"),
    Column("schema_version", "int", "the payload's schema version"),
    Column("occurred_at", "datetime", "when it happened, in UTC"),
    Column("recorded_at", "datetime", "when it was stored, in UTC"),
    Column("idempotency_key", "text", "what made a retried request one event"),
    Column("data", "json", "the payload (object)"),
    Column("meta", "json", "who or what caused it (object)"),
)
ALLOCATION_FILE = (
    PID,
    Column("study", "text", "the study"),
    Column("stage", "int", "the allocation's stage (1; 2 and on for re-randomisation)"),
    Column("arm", "text", "the arm allocated, by name (a blinded study's: its code)"),
    Column("method", "choice", "how it was drawn", METHODS),
    Column("sequence", "text", "the allocation sequence drawn from"),
    Column("number", "int", "the allocation's number in that sequence"),
    Column("stratum", "text", "the stratum (blank if none)"),
    Column("block", "int", "the block's number (blocked methods)"),
    Column("block_size", "int", "that block's size"),
    Column("position", "int", "the place in the block"),
    Column("timezone", "text", "the participant's IANA time zone"),
    *timed("allocated_at", "when the allocation was made"),
)

# broadcasts.csv: one row per recipient of each broadcast (bot/services/broadcasts.py).
BROADCAST_STATES = ("sent", "held", "failed", "pending", "cancelled")
BROADCAST_FILE = (
    Column("broadcast_id", "text", "the broadcast"),
    PID,
    Column("status", "choice", "what became of the recipient's message", BROADCAST_STATES),
    Column("reason", "text", "why it was held (opted out, withdrawn, taken over...), if held"),
    Column(
        "message_id",
        "text",
        "the outbox id of its message (messages.csv's message_id, kind `broadcast`): left out "
        "when pseudonymised",
    ),
    Column("due_at_utc", "datetime", "when the message was due (after quiet hours), in UTC"),
    Column("sent_at_utc", "datetime", "when it was sent, in UTC (blank if it was not)"),
)


def described(file: str, names: Iterable[str], known: Sequence[Column]) -> list[Column]:
    """The Columns of `names` as written to `file`: the known ones, the study code, and the
    per-study columns described by their pattern."""
    by_name = {c.name: c for c in (*known, STUDY_CODE)}
    return [by_name.get(name) or _per_study(file, name) for name in names]


def _per_study(file: str, name: str) -> Column:
    if file.startswith("decisions.") and name.startswith("p_"):
        what = f"the probability of option {name[2:]} at the point, after clipping"
        return Column(name, "number", f"{what} (blank: unavailable, or not this decision's)")
    if file.startswith("decisions.") and name.startswith("mod_"):
        what = f"the moderator {name[4:]}'s value at the point (yes/no as 1/0)"
        return Column(name, "number", f"{what}; blank where unknown or not this decision's")
    if file.startswith("evaluations.") and name.startswith("check_"):
        what = f"the checklist item {name[6:]}: 1 if the reviewer ticked it, 0 if not"
        return Column(name, "bool", f"{what} (blank: not on the checklist rated with)")
    if name.startswith("baseline_"):
        field = name.removeprefix("baseline_")
        return Column(name, "variable", f"the baseline field `{field}` given at enrollment")
    if name.startswith("conditional_p_"):
        arm = name.removeprefix("conditional_p_")
        return Column(name, "number", f"P(arm {arm}) given the block's earlier places")
    if name.startswith("p_"):
        what = f"the design probability of arm {name[2:]} (blank: not an arm of the study)"
        return Column(name, "number", what)
    raise KeyError(f"{file} has no column {name!r} described")
