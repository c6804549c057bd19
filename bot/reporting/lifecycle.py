"""What participants.csv and allocations.csv take from a participant's lifecycle and study
events: when they withdrew, opted out (and did not opt back in) or were erased, and why; and
each allocation to a study's arm (issue 61's `participant.allocated`), with the baseline given
at enrollment. Read in one query of those few event types (the event-type index), not from
each participant's whole stream, and held by participant for the files to write.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.reporting.cells import naive
from bot.reporting.transcript import local, zone
from bot.store.events import participant_of
from bot.store.reads.event_rows import rows_of_types
from bot.store.sealing import Sealer

WITHDRAWN, ERASED = "participant.withdrawn", "participant.erased"
ALLOCATED = "participant.allocated"
OPTED_OUT, OPTED_IN = "participant.opted_out", "participant.opted_in"
LIFECYCLE_TYPES = (WITHDRAWN, ERASED, ALLOCATED, OPTED_OUT, OPTED_IN)


@dataclass
class Lifecycle:
    """One participant's lifecycle facts (None: it did not happen), and their allocations
    (the stored payloads of `participant.allocated`, opened, with `allocated_at` added), in
    the order they were made."""

    withdrawn_at: datetime | None = None
    withdrawn_reason: str | None = None
    opted_out_at: datetime | None = None
    opted_out_reason: str | None = None
    erased_at: datetime | None = None
    erased_reason: str | None = None
    allocations: list[dict[str, Any]] = field(default_factory=list)

    def allocation(self) -> dict[str, Any] | None:
        """The latest allocation (the arm the participant is in now)."""
        return self.allocations[-1] if self.allocations else None

    def baseline(self) -> dict[str, Any]:
        """The baseline given at enrollment: the first allocation's that holds one."""
        for made in self.allocations:
            if made.get("baseline"):
                return dict(made["baseline"])
        return {}


def lifecycles(conn: Any, sealer: Sealer, upto: int, ids: Sequence[str]) -> dict[str, Lifecycle]:
    """Each participant's Lifecycle (those with none of these events have no entry), from the
    events up to seq `upto` (of `ids` only, if any)."""
    found: dict[str, Lifecycle] = {}
    for row in _rows(conn, sealer, upto, ids):
        pid = participant_of(row.stream_id)
        if pid is None:
            continue
        facts = found.setdefault(pid, Lifecycle())
        data, at, kind = row.data if type(row.data) is dict else {}, row.occurred_at, row.event_type
        if kind == WITHDRAWN:
            facts.withdrawn_at, facts.withdrawn_reason = at, _text(data.get("reason"))
        elif kind == ERASED:
            facts.erased_at, facts.erased_reason = at, _text(data.get("reason"))
        elif kind == OPTED_OUT:
            facts.opted_out_at, facts.opted_out_reason = at, _text(data.get("source"))
        elif kind == OPTED_IN:
            facts.opted_out_at = facts.opted_out_reason = None
        elif kind == ALLOCATED:
            made = {**data, "participant_id": pid, "allocated_at": at, "seq": row.seq}
            facts.allocations.append(made)
    return found


def _rows(conn: Any, sealer: Sealer, upto: int, ids: Sequence[str]) -> Iterator[Any]:
    yield from rows_of_types(conn, sealer, upto, LIFECYCLE_TYPES, ids)


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def baseline_names(found: Mapping[str, Lifecycle]) -> list[str]:
    """Every baseline field any participant's allocation holds, sorted: participants.csv's
    `baseline_<name>` columns."""
    return sorted({name for facts in found.values() for name in facts.baseline()})


def arms(found: Mapping[str, Lifecycle]) -> list[str]:
    """Every arm any allocation gives a probability for (or allocates to), sorted:
    allocations.csv's `p_<arm>` and `conditional_p_<arm>` columns."""
    named: set[str] = set()
    for facts in found.values():
        for made in facts.allocations:
            named.update(made.get("probabilities") or {})
            named.update(made.get("conditional") or {})
            named.add(str(made.get("arm")))
    return sorted(named)


def time_cells(name: str, at: datetime | None, tz: ZoneInfo) -> dict[str, Any]:
    """A time's `<name>_utc`, `_local` and `_local_naive` cells (bot.reporting.columns)."""
    there = local(at, tz)
    return {f"{name}_utc": at, f"{name}_local": there, f"{name}_local_naive": naive(there)}


def lifecycle_cells(facts: Lifecycle, tz: ZoneInfo) -> dict[str, Any]:
    """participants.csv's cells of a participant's lifecycle and latest allocation."""
    made = facts.allocation() or {}
    return {
        **time_cells("withdrawn_at", facts.withdrawn_at, tz),
        "withdrawn_reason": facts.withdrawn_reason,
        **time_cells("opted_out_at", facts.opted_out_at, tz),
        "opted_out_reason": facts.opted_out_reason,
        **time_cells("erased_at", facts.erased_at, tz),
        "erased_reason": facts.erased_reason,
        **time_cells("allocated_at", made.get("allocated_at"), tz),
        "stratum": made.get("stratum") or None,
        **{f"baseline_{name}": value for name, value in facts.baseline().items()},
    }


def allocation_records(
    found: Mapping[str, Lifecycle], zones: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    """allocations.csv's records: each allocation of the participants in `zones` (those
    exported, with their time zones), in the order they were made."""
    made = [m for pid, facts in found.items() if pid in zones for m in facts.allocations]
    made.sort(key=lambda m: m["seq"])
    for allocation in made:
        pid = allocation["participant_id"]
        tz_name = zones[pid]
        probabilities = allocation.get("probabilities") or {}
        conditional = allocation.get("conditional") or {}
        yield {
            **{k: allocation.get(k) for k in _ALLOCATION_FIELDS},
            "participant_id": pid,
            "stratum": allocation.get("stratum") or None,
            **{f"p_{arm}": p for arm, p in probabilities.items()},
            **{f"conditional_p_{arm}": p for arm, p in conditional.items()},
            "timezone": tz_name,
            **time_cells("allocated_at", allocation["allocated_at"], zone(tz_name)),
        }


# What allocations.csv takes from `participant.allocated` as it is.
_ALLOCATION_FIELDS: tuple[str, ...] = ("study", "stage", "arm", "method", "sequence", "number")
_ALLOCATION_FIELDS += ("block", "block_size", "position")
