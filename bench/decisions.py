"""Benchmark micro-randomised decision points: many due in the same minute, decided and
recorded, against bare timer firing in the same run.

    python bench/decisions.py                                 # PostgreSQL (bench.common)
    python bench/decisions.py --participants 5000 --decisions 5 --engine sqlite

A copy of interventions/walk-mrt with `--decisions` decision files (walk_prompt and copies)
is served by the real handler (bot.runtime.routing.build_handler with a step module over the
copy). `--participants` participants are enrolled directly (events appended, many per
transaction), each with one `decision` timer per decision due within the same minute, and,
beside them, as many `bench_noop` timers (a kind whose handler returns nothing) due in one
minute half an hour earlier (before any timer the decisions set). Their enrollment turns are
left out (each enrollment recorded with its work item done). For each of the two sets, on the
same database: fired at the end of its minute in batches by the scheduler's firing threads
(two on PostgreSQL; timer.fired and a work item each), then
`--threads` worker threads (`tandem worker`'s 4) draining every work item in one process,
timed from firing to the last item handled. A decision is decided in full: availability, moderators,
the draw, `decision.made`, the option's message (0.6) and the outcome's timers, and the next
point's timer. The bare set is the same path (firing, claiming, the turn's reads, the append
with `work.completed`) with nothing decided. Points are decided as they fire, in the firing's
batches (as `tandem worker`'s scheduler decides them); `--worker-turns` leaves each to a
worker's turn instead (the path before). Prints seconds, timers a second, this process's CPU
seconds (PostgreSQL's own not included), and the ratio.
Never pass/fail."""

from __future__ import annotations

import argparse
import queue
import shutil
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select  # noqa: E402

from bench.common import database  # noqa: E402
from bot.conversation import timer_turns  # noqa: E402
from bot.core.clock import FakeClock  # noqa: E402
from bot.core.config import load_settings  # noqa: E402
from bot.core.keys import generate_master_key  # noqa: E402
from bot.interventions.interpreter.applied import INTERVENTIONS  # noqa: E402
from bot.interventions.interpreter.decision_schedule import DECISION  # noqa: E402
from bot.runtime.bootstrap import build_services  # noqa: E402
from bot.runtime.routing import build_handler  # noqa: E402
from bot.runtime.worker import Worker  # noqa: E402
from bot.store.event_types.work import WorkCompleted  # noqa: E402
from bot.store.events import NewEvent, participant_stream  # noqa: E402
from bot.store.schema import events, work_items  # noqa: E402
from bot.store.timer_firing import due_timer_ids  # noqa: E402
from bot.timers import one_shot  # noqa: E402
from bot.timers.firing import BATCH, fire_many  # noqa: E402
from modules import MODULES  # noqa: E402
from modules.step import StepModule  # noqa: E402
from tests.factories import enrolled  # noqa: E402

SLUG = "walk-bench"
NOOP = "bench_noop"
DAY = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)  # the decisions' minute
BARE = DAY - timedelta(minutes=30)  # the bare timers' minute: before the decisions' follow-ups


def intervention(folder: Path, decisions: int) -> Path:
    """walk-mrt, copied as SLUG with `decisions` decision files."""
    root = folder / "interventions"
    shutil.copytree(INTERVENTIONS / "walk-mrt", root / SLUG)
    source = root / SLUG / "decisions" / "walk_prompt.md"
    for n in range(2, decisions + 1):
        shutil.copy(source, source.with_name(f"walk_prompt_{n}.md"))
    return root


def enroll(services: object, participants: int, decisions: int) -> None:
    """The participants, each with a decision timer per decision due in DAY's minute and as
    many bare timers in BARE's."""
    store = services.store  # type: ignore[attr-defined]
    names = ["walk_prompt", *(f"walk_prompt_{n}" for n in range(2, decisions + 1))]
    made = 0
    while made < participants:
        with store.transaction() as tx:
            for _ in range(min(250, participants - made)):
                data = enrolled(phone=f"+1415{made:07d}", timezone="UTC", intervention=SLUG)
                person = {"participant_id": data.participant_id, "timezone": "UTC"}
                joined = NewEvent(data)  # its enrollment turn left out: marked done
                batch: list = [joined, WorkCompleted(work_id=joined.event_id, skipped="bench")]
                for k, name in enumerate(names):
                    second = (made * decisions + k) % 60
                    due = DAY + timedelta(seconds=second)
                    payload = {"intervention": SLUG, "decision": name, "index": 0}
                    payload["anchor"] = DAY.isoformat()  # as decision_schedule.point_timer
                    scope = f"decision:{name}"
                    batch.append(
                        one_shot.scheduled(person, DECISION, due, scope=scope, payload=payload)
                    )
                    bare = BARE + timedelta(seconds=second)
                    batch.append(one_shot.scheduled(person, NOOP, bare, payload={"n": k}))
                tx.append(participant_stream(data.participant_id), batch)
                made += 1


def drain(services: object, handler: object, threads: int) -> int:
    """Every due work item handled by `threads` workers; the items handled."""
    handled = [0] * threads

    def work(n: int) -> None:
        worker = Worker(services, handler, f"bench-{n}")  # type: ignore[arg-type]
        while done := worker.run_once():
            handled[n] += done

    running = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return sum(handled)


def fire_and_drain(
    services: object, handler: object, at: datetime, threads: int, at_firing: bool
) -> tuple:
    """(seconds, seconds firing, timers fired, items handled, this process's CPU seconds)
    from firing at `at` to the last item; `at_firing`: decision points decided as they fire,
    as `tandem worker` runs them."""
    services.clock.set(at)  # type: ignore[attr-defined]
    scheduler_fire = _fire(services, handler, at_firing)
    began, cpu = time.perf_counter(), time.process_time()
    fired = scheduler_fire(at)
    firing = time.perf_counter() - began
    handled = drain(services, handler, threads)
    return time.perf_counter() - began, firing, fired, handled, time.process_time() - cpu


def _fire(services: object, handler: object, at_firing: bool):  # noqa: ANN202
    from bot.runtime.routing import TURNS_AT_FIRING
    from bot.runtime.worker import turns_at_firing
    from bot.timers.scheduler import Scheduler

    turns = turns_at_firing(handler, TURNS_AT_FIRING, None) if at_firing else None  # type: ignore[arg-type]
    scheduler = Scheduler(services, turns=turns)  # type: ignore[arg-type]
    store = services.store  # type: ignore[attr-defined]

    def fire(at: datetime) -> int:
        """The due timers in batches of firing.BATCH, taken in turn by the scheduler's firing
        threads (two on PostgreSQL), as its `_fire_loop`s take a burst's batches."""
        due = due_timer_ids(store, at)
        batches = queue.SimpleQueue()
        for begin in range(0, len(due), BATCH):
            batches.put(due[begin : begin + BATCH])
        fired = [0] * scheduler.firing_threads

        def run(n: int) -> None:
            while True:
                try:
                    batch = batches.get_nowait()
                except queue.Empty:
                    return
                decided = fire_many(store, batch, at, scheduler.policy)
                fired[n] += sum(1 for d in decided if d.outcome != "none")

        running = [threading.Thread(target=run, args=(n,)) for n in range(len(fired))]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join()
        return sum(fired)

    return fire


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--participants", type=int, default=5000)
    parser.add_argument("--decisions", type=int, default=5)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--engine", default="postgresql", choices=("postgresql", "sqlite"))
    parser.add_argument(
        "--worker-turns",
        action="store_true",
        help="decide each point in a worker's turn after it fires (the path before decision "
        "points were decided as they fire)",
    )
    args = parser.parse_args()
    timer_turns.register(NOOP, lambda fired: [])
    with tempfile.TemporaryDirectory() as folder, database(args.engine) as url:
        root = intervention(Path(folder), args.decisions)
        env = {"DATABASE_URL": url, "INTERVENTION": SLUG, "SAFETY_CLASSIFIER": "off"}
        keyed = {**env, "TANDEM_MASTER_KEY": generate_master_key()}  # sealed, as deployed
        settings = load_settings(keyed, env_file=None)
        clock = FakeClock(DAY - timedelta(hours=1))
        services = build_services(settings, clock=clock)
        step = StepModule(root=root, modules=[n for n in MODULES if n != "step"])
        handler = build_handler(services, modules={**MODULES, "step": step})
        began = time.perf_counter()
        enroll(services, args.participants, args.decisions)
        count = args.participants * args.decisions
        print(f"{args.engine}: {args.participants} participants x {args.decisions} decisions "
              f"enrolled in {time.perf_counter() - began:.1f} s")  # fmt: skip
        end = timedelta(seconds=59)
        at_firing = not args.worker_turns
        bare = fire_and_drain(services, handler, BARE + end, args.threads, at_firing)
        made = fire_and_drain(services, handler, DAY + end, args.threads, at_firing)
        with services.store.reading() as conn:
            left = conn.execute(
                select(func.count()).where(work_items.c.status == "pending")
            ).scalar_one()
            decided = conn.execute(
                select(func.count()).where(events.c.event_type == "decision.made")
            ).scalar_one()
        how = "by workers' turns" if args.worker_turns else "as they fire"
        for label, (seconds, firing, fired, handled, cpu) in (
            ("decision points", made),
            ("bare timers", bare),
        ):
            print(f"{label + ':':16} {fired} fired, {handled} work items handled in "
                  f"{seconds:.1f} s ({count / seconds:.0f}/s; firing {firing:.1f} s; "
                  f"this process's CPU {cpu:.1f} s)")  # fmt: skip
        print(f"decided {how}: {decided} decision.made; ratio decisions/bare: "
              f"{made[0] / bare[0]:.2f}; pending work items left: {left}")  # fmt: skip
        services.close()


if __name__ == "__main__":
    main()
