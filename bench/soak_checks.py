"""The soak's checks and figures (bench/soak.py): what was acknowledged, sent and fired, read
back from the event table and the fake Twilio server's log, `tandem replay --check`, RSS."""

from __future__ import annotations

import builtins
import functools
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from sqlalchemy import func, select

from bench.soak_procs import BIN, ROOT
from bot.store.schema import events, outbox, timers

RSS_TOLERANCE = 0.10  # RSS at the end within 10 % of after warm-up
# A timer (one id) is armed by `scheduled` or `deferred`, and fired or skipped once per arming.
TIMER_EVENTS = (
    "timer.scheduled",
    "timer.deferred",
    "timer.fired",
    "timer.skipped",
    "timer.cancelled",
)


@dataclass
class Figures:
    participants: int = 0
    days: float = 0  # simulated (fewer than asked if a wall limit stopped the run)
    steps: int = 0
    wall_seconds: float = 0.0
    events: int = 0
    persona_messages: int = 0
    inbound_retries: int = 0  # posts refused while the web was down, sent again
    stalls: int = 0  # steps where nothing moved until the clock did (a dead process's lease)
    acked: set[str] = field(default_factory=set)
    faults: dict[str, int] = field(default_factory=dict)
    not_injected: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    outbox_status: dict[str, int] = field(default_factory=dict)
    rss: list[tuple[str, int, int, int]] = field(default_factory=list)  # role, pid, warm, end
    failures: list[str] = field(default_factory=list)


def check(figures: Figures, store: Any, twilio: Any, env: dict[str, str], now: datetime) -> None:
    """Fill in the counts and `failures` (empty: every check passed)."""
    with store.reading() as conn:
        figures.events = int(conn.execute(select(func.count()).select_from(events)).scalar_one())
        rows = conn.execute(
            select(events.c.event_type, events.c.data)
            .where(events.c.event_type.in_(("message.received", "message.sent", *TIMER_EVENTS)))
            .order_by(events.c.seq)
        ).all()
        boxes = conn.execute(
            select(outbox.c.status, outbox.c.next_attempt_at, outbox.c.error_message)
        ).all()
        overdue = conn.execute(
            select(func.count()).where(timers.c.status == "scheduled", timers.c.due_at <= now)
        ).scalar_one()
    received = Counter(d["message_sid"] for t, d in rows if t == "message.received")
    sent = Counter(d["outbox_id"] for t, d in rows if t == "message.sent")
    sent_sids = {d["provider_sid"] for t, d in rows if t == "message.sent"}
    fired, again = timer_handling(rows)
    twice = len(again)
    missed = sum(1 for t, d in rows if t == "timer.skipped" and d.get("reason") == "missed")
    created = [r.sid for r in twilio.messages]

    c = figures.counts
    c["inbound acknowledged"] = len(figures.acked)
    c["inbound lost"] = sum(1 for sid in figures.acked if received[sid] == 0)
    c["inbound duplicated"] = sum(1 for sid in figures.acked if received[sid] > 1)
    c["outbound sent (fake Twilio)"] = len(created)
    c["outbound duplicated"] = sum(n - 1 for n in sent.values() if n > 1) + sum(
        1 for sid in created if sid not in sent_sids
    )  # a send Twilio took that no `message.sent` records is a second send or a lost record
    c["outbound recorded sent, not at Twilio"] = len(sent_sids - set(created))
    figures.outbox_status = dict(Counter(status for status, _, _ in boxes))
    c["outbound lost"] = (
        sum(
            1
            for status, due, _ in boxes
            if status in ("pending", "unknown", "deferred") and (due is None or due <= now)
        )
        + c["outbound recorded sent, not at Twilio"]
    )
    c["outbound failed/suppressed without a reason"] = sum(
        1 for status, _, why in boxes if status in ("failed", "suppressed") and not why
    )
    c["timers fired"] = fired
    c["timers fired twice"] = twice
    c["timers skipped after cancelled/skipped (sent nothing)"] = skipped_after_done(rows)
    c["timers lost"] = int(overdue) + missed
    for name in (
        "inbound lost",
        "inbound duplicated",
        "outbound duplicated",
        "outbound lost",
        "outbound failed/suppressed without a reason",
        "timers fired twice",
        "timers lost",
    ):
        if c[name]:
            figures.failures.append(f"{name}: {c[name]}")
    figures.failures += [f"timer handled twice: {what}" for what in again[:10]]
    replay = subprocess.run(
        [str(BIN / "tandem"), "replay", "--check"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    c["replay --check exit"] = replay.returncode
    if replay.returncode != 0:
        figures.failures.append(
            f"tandem replay --check: exit {replay.returncode}: "
            f"{(replay.stdout + replay.stderr).strip()[-400:]}"
        )
    for role, pid, warm, end in figures.rss:
        if abs(end - warm) > RSS_TOLERANCE * warm:
            figures.failures.append(
                f"RSS of {role} (pid {pid}): {warm / 1024:.1f} MiB after warm-up, "
                f"{end / 1024:.1f} MiB at the end (more than {RSS_TOLERANCE:.0%} apart)"
            )
    if not figures.rss:
        figures.failures.append("no process ran long enough to read its RSS after warm-up")
    figures.failures += [f"fault not injected: {why}" for why in figures.not_injected]


def timer_firings(rows: list[Any]) -> tuple[int, int]:
    """(timers fired or skipped when due, those handled twice); `twice_handled` names them."""
    fired, again = timer_handling(rows)
    return fired, len(again)


def timer_handling(rows: list[Any]) -> tuple[int, list[str]]:
    """(timers fired or skipped when due, each handling after the first as `kind: event after
    state`), in event order: a timer is armed by `scheduled` or `deferred`, then fired or
    skipped once; after firing, its turn may record `skipped` once more (the prompt was
    answered meanwhile: bot.conversation.timer_turns), which is its verdict, not a second
    firing."""
    state: dict[str, str] = {}
    kinds: dict[str, str] = {}
    fired = 0
    again: list[str] = []
    for kind, data in rows:
        if not kind.startswith("timer."):
            continue
        timer, was = data["timer_id"], state.get(data["timer_id"])
        kinds.setdefault(timer, str(data.get("kind", "?")))
        if kind in ("timer.scheduled", "timer.deferred"):
            state[timer] = "armed"
        elif kind == "timer.cancelled":
            state[timer] = "done"
        elif kind == "timer.fired":
            fired += 1
            if was != "armed":
                again.append(f"{kinds[timer]}: {kind} after {was}")
            state[timer] = "fired"
        elif kind == "timer.skipped":
            fired += was == "armed"
            if was not in ("armed", "fired", "done"):
                again.append(f"{kinds[timer]}: {kind} after {was}")
            state[timer] = "done"
    return fired, again


def skipped_after_done(rows: list[Any]) -> int:
    """`timer.skipped` recorded for a timer already cancelled or skipped: a verdict that sends
    nothing (so not a second firing), counted apart so that it stays visible."""
    state: dict[str, str] = {}
    found = 0
    for kind, data in rows:
        if not kind.startswith("timer."):
            continue
        timer = data["timer_id"]
        if kind == "timer.skipped" and state.get(timer) == "done":
            found += 1
        if kind in ("timer.scheduled", "timer.deferred"):
            state[timer] = "armed"
        elif kind in ("timer.cancelled", "timer.skipped"):
            state[timer] = "done"
        elif kind == "timer.fired":
            state[timer] = "fired"
    return found


def print_figures(figures: Figures, file: TextIO = sys.stdout) -> None:
    f = figures
    print = functools.partial(builtins.print, file=file)  # noqa: A001 - every line to `file`
    print(f"participants x days: {f.participants} x {f.days}")
    print(f"wall time: {f.wall_seconds:.0f} s; clock steps: {f.steps}; stalled steps: {f.stalls}")
    print(
        f"events stored: {f.events}; simulated events per second: "
        f"{f.events / max(f.wall_seconds, 1e-9):.1f}"
    )
    print(
        f"persona messages: {f.persona_messages}; posts retried while the web was down: "
        f"{f.inbound_retries}"
    )
    faults = ", ".join(f"{kind} {n}" for kind, n in sorted(f.faults.items())) or "none"
    print(f"faults injected: {faults}")
    for name, value in f.counts.items():
        print(f"  {name}: {value}")
    print(
        "  outbox rows by status: "
        + ", ".join(f"{k} {v}" for k, v in sorted(f.outbox_status.items()))
    )
    for role, pid, warm, end in f.rss:
        print(
            f"  RSS {role} pid {pid}: {warm / 1024:.1f} MiB after warm-up -> "
            f"{end / 1024:.1f} MiB at the end ({100 * (end - warm) / warm:+.1f} %)"
        )
    if f.failures:
        print("FAILED:")
        for failure in f.failures:
            print(f"  - {failure}")
    else:
        print("all checks passed: lost 0, duplicated 0, timers lost 0, replay clean, RSS flat")
