"""The participants table's query: search, filters, sorting and paging, done by the database."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, exists, func, or_, select

from bot.store.schema import alerts, participants

SORTS = {
    "enrolled": participants.c.enrolled_at,
    "name": participants.c.name,
    "phone": participants.c.phone,
    "status": participants.c.status,
    "step": participants.c.current_step,
    "last_inbound": participants.c.last_inbound_at,
}
STATUSES = ("active", "paused", "completed", "withdrawn", "unenrolled", "erased")
PAGE_SIZES = (25, 50, 100)
OPEN_ALERT = exists().where(
    and_(alerts.c.participant_id == participants.c.participant_id, alerts.c.status != "resolved")
)


@dataclass
class Filters:
    """What the researcher asked for, read from the query string; bad values become problems."""

    q: str = ""
    status: str = ""
    intervention: str = ""
    step: str = ""
    alert: bool = False
    opted_out: str = ""  # "" | "yes" | "no"
    sort: str = "enrolled"
    desc: bool = True
    page: int = 1
    per: int = 50
    problems: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, args: Any) -> Filters:
        found = cls(
            q=args.get("q", "").strip()[:100],
            status=args.get("status", ""),
            intervention=args.get("intervention", "").strip(),
            step=args.get("step", "").strip(),
            alert=args.get("alert") == "open",
            opted_out=args.get("opted_out", ""),
            sort=args.get("sort", "enrolled"),
            desc=args.get("dir", "desc") != "asc",
        )
        if found.status and found.status not in STATUSES:
            found.problems["status"] = f"unknown status {found.status!r}"
            found.status = ""
        if found.sort not in SORTS:
            found.problems["sort"] = f"cannot sort by {found.sort!r}"
            found.sort = "enrolled"
        if found.opted_out not in ("", "yes", "no"):
            found.problems["opted_out"] = "opted out must be yes or no"
            found.opted_out = ""
        found.page = _number(args.get("page", "1"), 1, found.problems, "page")
        found.per = _number(args.get("per", "50"), 50, found.problems, "per")
        if found.per not in PAGE_SIZES:
            found.problems["per"] = f"rows per page must be one of {PAGE_SIZES}"
            found.per = 50
        return found

    def where(self) -> Any:
        clauses = []
        if self.q:
            like = f"%{self.q.lower()}%"
            digits = "".join(ch for ch in self.q if ch.isdigit())
            options = [func.lower(participants.c.name).like(like)]
            if digits:
                options.append(participants.c.phone.like(f"%{digits}%"))
            clauses.append(or_(*options))
        if self.status:
            clauses.append(participants.c.status == self.status)
        else:
            clauses.append(participants.c.status != "unenrolled")
        if self.intervention:
            clauses.append(participants.c.intervention == self.intervention)
        if self.step:
            clauses.append(participants.c.current_step == self.step)
        if self.alert:
            clauses.append(OPEN_ALERT)
        if self.opted_out:
            clauses.append(participants.c.opted_out == (self.opted_out == "yes"))
        return and_(*clauses)


def _number(text: str, default: int, problems: dict[str, str], name: str) -> int:
    if text.isdigit() and int(text) >= 1:
        return int(text)
    problems[name] = f"{name} must be a whole number from 1"
    return default


def page(conn: Connection, filters: Filters) -> tuple[list[dict[str, Any]], int]:
    """One page of rows (with `open_alerts`) and the number of rows matching the filters."""
    where = filters.where()
    total = int(
        conn.execute(select(func.count()).select_from(participants).where(where)).scalar_one()
    )
    column = SORTS[filters.sort]
    order = column.desc().nulls_last() if filters.desc else column.asc().nulls_last()
    open_alerts = (
        select(func.count())
        .where(
            and_(
                alerts.c.participant_id == participants.c.participant_id,
                alerts.c.status != "resolved",
            )
        )
        .scalar_subquery()
        .label("open_alerts")
    )
    query = (
        select(
            participants.c.participant_id,
            participants.c.name,
            participants.c.phone,
            participants.c.channel,
            participants.c.status,
            participants.c.intervention,
            participants.c.study,
            participants.c.current_step,
            participants.c.conversation_state,
            participants.c.opted_out,
            participants.c.enrolled_at,
            participants.c.last_inbound_at,
            open_alerts,
        )
        .where(where)
        .order_by(order, participants.c.participant_id)
        .limit(filters.per)
        .offset((filters.page - 1) * filters.per)
    )
    return [dict(r._mapping) for r in conn.execute(query)], total


def choices(conn: Connection) -> dict[str, list[str]]:
    """The interventions and steps present, for the filter menus."""
    found = conn.execute(
        select(participants.c.intervention, participants.c.current_step).distinct()
    ).all()
    return {
        "interventions": sorted({r.intervention for r in found}),
        "steps": sorted({r.current_step for r in found if r.current_step}),
    }
